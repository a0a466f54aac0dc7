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

// Package canarywatch follows the Canaries (and CanaryGroups) of a
// cluster as a client does: a list, then a watch from the list's
// resourceVersion. The CLI's `get canaries --watch`, `get groups --watch`
// and the dashboard follow them with it.
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
type Funcs[T any] struct {
	// Listed receives the objects of the list, once the watch is open.
	Listed func(items []T) error
	// Changed receives each object the watch sees change, or be deleted.
	Changed func(item *T, deleted bool) error
}

// Follow lists the Canaries, watches them from the list on, and calls
// funcs until the watch ends: nil when the API server closed it, else the
// error (an Error event as an API error). A watch that ends must be
// followed again from a new list: Restartable tells the ends that are
// routine.
func Follow(ctx context.Context, kube client.WithWatch, opts []client.ListOption, funcs Funcs[v1alpha1.Canary]) error {
	return follow(ctx, kube, opts, func() client.ObjectList { return &v1alpha1.CanaryList{} },
		func(l client.ObjectList) []v1alpha1.Canary { return l.(*v1alpha1.CanaryList).Items }, funcs)
}

// FollowGroups is Follow for the CanaryGroups.
func FollowGroups(ctx context.Context, kube client.WithWatch, opts []client.ListOption, funcs Funcs[v1alpha1.CanaryGroup]) error {
	return follow(ctx, kube, opts, func() client.ObjectList { return &v1alpha1.CanaryGroupList{} },
		func(l client.ObjectList) []v1alpha1.CanaryGroup { return l.(*v1alpha1.CanaryGroupList).Items }, funcs)
}

// follow lists with newList, watches from the list on and calls funcs.
func follow[T any](ctx context.Context, kube client.WithWatch, opts []client.ListOption, newList func() client.ObjectList,
	items func(client.ObjectList) []T, funcs Funcs[T]) error {
	list := newList()
	if err := kube.List(ctx, list, opts...); err != nil {
		return err
	}
	fromList := &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.GetResourceVersion()}}
	watcher, err := kube.Watch(ctx, newList(), append(append([]client.ListOption(nil), opts...), fromList)...)
	if err != nil {
		return err
	}
	defer watcher.Stop()
	if err := funcs.Listed(items(list)); err != nil {
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
			item, isItem := event.Object.(interface{}).(*T)
			if !isItem {
				continue
			}
			if err := funcs.Changed(item, event.Type == watch.Deleted); err != nil {
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
