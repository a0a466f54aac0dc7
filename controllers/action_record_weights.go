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
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
)

// recordWeights records the weights the routing objects carry, which a
// lost status write did not, and restarts the step clock from now.
func (r *CanaryReconciler) recordWeights(obj *v1alpha1.Canary, obs rollout.Observation) (ctrl.Result, error) {
	obj.Status.CanaryWeight = obs.CanaryWeight
	if g := obj.Status.Group; g != nil {
		// A held step whose weights were written: it is taken.
		g.Holding = ""
	}
	transition(obj, obj.Status.Phase, obs.Now, v1alpha1.ProgressingReason, "%s", analysingMessage(obj))
	return ctrl.Result{RequeueAfter: requeueAtNextStep(obj, obs.Now)}, nil
}
