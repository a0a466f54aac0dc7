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

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/serin-dev/serin/analysis"
	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/notifier"
)

// postRollout queues the post-rollout hooks in the analysis runner's
// bounded queue, as a snapshot of the Canary now; a failure is logged and
// emitted as an event.
func (r *CanaryReconciler) postRollout(ctx context.Context, obj *v1alpha1.Canary) {
	snapshot := obj.DeepCopy()
	log := ctrl.LoggerFrom(ctx)
	for _, h := range analysis.Hooks(obj, v1alpha1.PostRolloutHook) {
		r.Analysis.Fire(snapshot, h, func(err error) {
			if err == nil {
				return
			}
			log.Error(err, "post-rollout hook failed")
			r.emit(ctrl.LoggerInto(context.Background(), log), snapshot, notifier.SeverityWarn, v1alpha1.PostRolloutFailedReason, "post-rollout hook failed: %v", err)
		})
	}
}
