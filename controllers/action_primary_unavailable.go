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
	"fmt"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
)

// primaryUnavailable keeps Ready False, outside a rollout, while the
// primary has no pod ready to serve; its Deployment's status changes
// reconcile again.
func (r *CanaryReconciler) primaryUnavailable(a rollout.PrimaryUnavailable) (ctrl.Result, error) {
	return ctrl.Result{}, &waitingError{Reason: v1alpha1.PrimaryUnavailableReason, RequeueAfter: time.Minute,
		Err: fmt.Errorf("the primary has no pod ready to serve: %s", a.Message)}
}
