/*
Copyright 2026 The serin authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package testutil

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// Calls watches the calls made through a client, for tests that check
// what the code under test wrote: it logs every write as "verb Kind/name"
// (create, update, patch, delete, patch-status), in order, and fails the
// calls named in Fail, reads included ("get Kind/name", "list KindList"),
// with their error. The failed writes are logged too.
type Calls struct {
	// Writes are the writes made, in order.
	Writes []string
	// Fail maps the calls that fail to their error.
	Fail map[string]error
}

// Wrap returns c with its calls watched.
func (l *Calls) Wrap(c client.WithWatch) client.WithWatch {
	return interceptor.NewClient(c, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, o client.Object, opts ...client.GetOption) error {
			if err := l.call(c, "get", o, key.Name, false); err != nil {
				return err
			}
			return c.Get(ctx, key, o, opts...)
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if err := l.call(c, "list", list, "", false); err != nil {
				return err
			}
			return c.List(ctx, list, opts...)
		},
		Create: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.CreateOption) error {
			if err := l.call(c, "create", o, o.GetName(), true); err != nil {
				return err
			}
			return c.Create(ctx, o, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.UpdateOption) error {
			if err := l.call(c, "update", o, o.GetName(), true); err != nil {
				return err
			}
			return c.Update(ctx, o, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, o client.Object, p client.Patch, opts ...client.PatchOption) error {
			if err := l.call(c, "patch", o, o.GetName(), true); err != nil {
				return err
			}
			return c.Patch(ctx, o, p, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.DeleteOption) error {
			if err := l.call(c, "delete", o, o.GetName(), true); err != nil {
				return err
			}
			return c.Delete(ctx, o, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, o client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			if err := l.call(c, "patch-"+sub, o, o.GetName(), true); err != nil {
				return err
			}
			return c.SubResource(sub).Patch(ctx, o, p, opts...)
		},
	})
}

// call logs a write and returns the error of a call that fails.
func (l *Calls) call(c client.Client, verb string, o runtime.Object, name string, write bool) error {
	kind := fmt.Sprintf("%T", o)
	if gvk, err := apiutil.GVKForObject(o, c.Scheme()); err == nil {
		kind = gvk.Kind
	}
	id := verb + " " + kind
	if name != "" {
		id += "/" + name
	}
	if write {
		l.Writes = append(l.Writes, id)
	}
	return l.Fail[id]
}
