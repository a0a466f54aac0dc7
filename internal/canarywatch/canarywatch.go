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

// Package canarywatch follows the Canaries of a cluster as a client does:
// a list, then a watch from the list's resourceVersion. The CLI's
// `get canaries --watch` and the dashboard follow Canaries with it.
package canarywatch

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// RestartDelay is the wait before following again after a watch ended:
// it keeps a watch that the server keeps closing from turning into a busy
// loop.
const RestartDelay = time.Second

// Funcs receive what a watch sees; an error they return ends Follow.
type Funcs struct {
	// Listed receives the Canaries of the list, once the watch is open.
	Listed func(canaries []v1alpha1.Canary) error
	// Changed receives each Canary the watch sees change, or be deleted.
	Changed func(canary *v1alpha1.Canary, deleted bool) error
}

// Follow lists the Canaries, watches them from the list on, and calls
// funcs until the watch ends: nil when the API server closed it, else the
// error (an Error event as an API error). A watch that ends must be
// followed again from a new list: Restartable tells the ends that are
// routine.
func Follow(ctx context.Context, kube client.WithWatch, opts []client.ListOption, funcs Funcs) error {
	list := &v1alpha1.CanaryList{}
	if err := kube.List(ctx, list, opts...); err != nil {
		return err
	}
	fromList := &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}}
	watcher, err := kube.Watch(ctx, &v1alpha1.CanaryList{}, append(append([]client.ListOption(nil), opts...), fromList)...)
	if err != nil {
		return err
	}
	defer watcher.Stop()
	if err := funcs.Listed(list.Items); err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case event, ok := <-watcher.ResultChan():
			if !ok {
				return nil
			}
			if event.Type == watch.Error {
				return apierrors.FromObject(event.Object)
			}
			canary, isCanary := event.Object.(*v1alpha1.Canary)
			if !isCanary {
				continue
			}
			if err := funcs.Changed(canary, event.Type == watch.Deleted); err != nil {
				return err
			}
		}
	}
}

// Restartable tells whether Follow ended as watches routinely do, and a
// new Follow goes on: the API server closed the watch (nil), or its
// resourceVersion expired (410 Gone).
func Restartable(err error) bool {
	return err == nil || apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
}
