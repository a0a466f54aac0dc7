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

package cli

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// getCanary reads a Canary, with flux's wording when it does not exist.
func getCanary(ctx context.Context, kube client.Client, key types.NamespacedName) (*v1alpha1.Canary, error) {
	canary := &v1alpha1.Canary{}
	if err := kube.Get(ctx, key, canary); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, objectScope{kind: v1alpha1.CanaryKind, namespace: key.Namespace, name: key.Name}.notFoundError()
		}
		return nil, err
	}
	return canary, nil
}

// waitForCanary reads the Canary every interval until done is true, and
// returns it then; it gives up when ctx ends.
func waitForCanary(ctx context.Context, kube client.Client, key types.NamespacedName, interval time.Duration,
	done func(*v1alpha1.Canary) bool) (*v1alpha1.Canary, error) {
	return waitForObject(ctx, interval, func(ctx context.Context) (*v1alpha1.Canary, error) {
		return getCanary(ctx, kube, key)
	}, done)
}

// waitForObject reads an object with get every interval until done is
// true, and returns it then; it gives up when ctx ends or get fails.
func waitForObject[T any](ctx context.Context, interval time.Duration,
	get func(context.Context) (T, error), done func(T) bool) (T, error) {
	var object T
	err := wait.PollUntilContextCancel(ctx, interval, true, func(ctx context.Context) (bool, error) {
		var err error
		object, err = get(ctx)
		if err != nil {
			return false, err
		}
		return done(object), nil
	})
	return object, err
}

// waitError words a wait that ran into --timeout.
func waitError(err error, timeout time.Duration, waitingFor string) error {
	if wait.Interrupted(err) {
		return fmt.Errorf("timed out after %s waiting for %s: is the serin agent running?", timeout, waitingFor)
	}
	return err
}
