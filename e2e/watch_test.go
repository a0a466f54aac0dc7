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

package e2e

import (
	"context"
	"testing"
	"time"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// watchNamespace keeps an informer cache of the kinds of objs in one
// namespace for the rest of the test, and signals changed (without
// blocking) on every add, update or delete it sees. A test that samples a
// namespace's state many times a second reads the cache and asks the API
// server only to confirm what it found: 100 ms polls of a route, its
// EndpointSlices and a Deployment in ten namespaces were hundreds of
// requests a second, a large share of the testbed's CPU.
func watchNamespace(t *testing.T, ns string, changed chan<- struct{}, objs ...client.Object) client.Reader {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c, err := cache.New(env.Config, cache.Options{
		Scheme:            k8s.Scheme(),
		DefaultNamespaces: map[string]cache.Config{ns: {}},
	})
	if err != nil {
		cancel()
		t.Fatalf("cache of %s: %v", ns, err)
	}
	signal := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	for _, o := range objs {
		inf, err := c.GetInformer(ctx, o)
		if err != nil {
			cancel()
			t.Fatalf("informer of %T in %s: %v", o, ns, err)
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { signal() },
			UpdateFunc: func(any, any) { signal() },
			DeleteFunc: func(any) { signal() },
		}); err != nil {
			cancel()
			t.Fatalf("event handler of %T in %s: %v", o, ns, err)
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.Start(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
	syncCtx, stop := context.WithTimeout(ctx, 30*time.Second)
	defer stop()
	if !c.WaitForCacheSync(syncCtx) {
		t.Fatalf("the cache of %s did not sync in 30 s", ns)
	}
	return c
}
