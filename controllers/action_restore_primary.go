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
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/internal/workload"
)

// restorePrimary rolls the primary back to its last promoted revision
// (see each targetKind). Routing is not touched: the canary keeps serving
// while the primary comes back.
func (r *CanaryReconciler) restorePrimary(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) (ctrl.Result, error) {
	return r.targetKindOf(obj).restorePrimary(ctx, obj, obs)
}

// restorePrimaryConfigs brings the primary's copies of the tracked configs
// back to the last promoted data: from the sources when Git reverted them
// (the target is on the last promoted spec again). When the sources still
// hold the bad revision's data and the copies do too, the restore stops
// rather than run the good template with the bad data.
func (r *CanaryReconciler) restorePrimaryConfigs(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation, rev *promotedRevision) error {
	if obs.Target.SpecHash == obj.Status.LastPromotedSpec {
		return r.copyPrimaryConfigs(ctx, obj, obs.Target.TrackedConfigs)
	}
	if rev == nil {
		return nil // promoted before serin recorded revisions: the template alone
	}
	for key, want := range rev.Configs {
		ref, ok := workload.ParseConfigRef(key)
		if !ok {
			continue
		}
		got, err := r.configCopyHash(ctx, obj.Namespace, ref)
		if err != nil {
			return err
		}
		if got != want {
			return &stallingError{Reason: v1alpha1.HaltedReason, Err: fmt.Errorf(
				"cannot restore %s: its copy of %s holds the new revision's data, and the last promoted data is not kept (serin never stores config data): revert the target and %s in Git",
				obj.GetPrimaryName(), key, ref.Name)}
		}
	}
	return nil
}

// configCopyHash hashes the data of the primary's copy of a tracked config.
func (r *CanaryReconciler) configCopyHash(ctx context.Context, namespace string, ref workload.ConfigRef) (string, error) {
	key := types.NamespacedName{Namespace: namespace, Name: workload.PrimaryConfigName(ref.Name)}
	data, _, err := r.readConfig(ctx, key, ref.Kind)
	if err != nil {
		return "", err
	}
	return workload.ConfigDataHash(data), nil
}
