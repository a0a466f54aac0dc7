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
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/routing"
)

// targetKind is what the engine does differently for each kind of
// spec.targetRef. Each kind is one file: target_deployment.go,
// target_daemonset.go, target_service.go, target_statefulset.go;
// targetKindOf picks it. The kinds
// whose primary runs pods also implement podKind (target_pods.go), over
// which the primary's restore, repair and hand-back are written once. The
// actions call it; decide never does (it sees the Observation only).
type targetKind interface {
	// observe fills the observation: the target, its primary, the
	// generated objects and the routes.
	observe(ctx context.Context, obj *v1alpha1.Canary, obs *rollout.Observation) error
	// routingTarget describes the backends the router routes between.
	routingTarget(ctx context.Context, obj *v1alpha1.Canary) (routing.Target, error)
	// initialize creates the generated objects, Services first, and the
	// primary; it says what it created, for the Initializing message.
	initialize(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) (string, error)
	// syncGenerated re-creates the generated objects that drifted or were
	// deleted, keeping the weights and the primary's revision.
	syncGenerated(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) error
	// promote copies the analysed revision to the primary.
	promote(ctx context.Context, obj *v1alpha1.Canary, revision rollout.Target) error
	// primaryMayGoDark reports whether the primary may have no ready pod
	// for a while as it rolls to the promoted revision.
	primaryMayGoDark(ctx context.Context, obj *v1alpha1.Canary) bool
	// scaleUp runs the canary for an analysis (no traffic yet).
	scaleUp(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) error
	// scaleDown takes the canary's pods away; a no-op when they are.
	scaleDown(ctx context.Context, obj *v1alpha1.Canary) error
	// restorePrimary sets the primary back to the last promoted revision
	// while the canary keeps serving (failurePolicy RestorePrimary, a Git
	// revert after a halt).
	restorePrimary(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) (ctrl.Result, error)
	// repairPrimary re-creates a primary someone deleted, with the last
	// promoted revision.
	repairPrimary(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation) (ctrl.Result, error)
	// handBack gives the target its place back when a Canary with
	// revertOnDeletion is deleted; done is false while it waits.
	handBack(ctx context.Context, obj *v1alpha1.Canary) (done bool, err error)
	// primaryObject is an empty object of the primary's type, or nil when
	// the primary is one of the generated Services.
	primaryObject() client.Object
}

// targetKindOf returns the code of the Canary's kind of target.
func (r *CanaryReconciler) targetKindOf(obj *v1alpha1.Canary) targetKind {
	switch obj.Spec.TargetRef.Kind {
	case v1alpha1.ServiceKind:
		return serviceTarget{r}
	case v1alpha1.DaemonSetKind:
		return daemonSetTarget{r}
	case v1alpha1.StatefulSetKind:
		return statefulSetTarget{r}
	}
	return deploymentTarget{r}
}
