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

package controllers

import (
	"context"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/routing"
)

// setRoutes sets the weights with the Canary's router and records them.
func (r *CanaryReconciler) setRoutes(ctx context.Context, obj *v1alpha1.Canary, w routing.Weights) error {
	router, rt, err := r.routing(ctx, obj)
	if err != nil {
		return err
	}
	if err := router.SetRoutes(ctx, obj, rt, w); err != nil {
		return err
	}
	obj.Status.CanaryWeight = w.Canary
	r.metrics.setWeight(obj)
	return nil
}
