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

package testobj

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// CanaryWrapper builds a Canary.
type CanaryWrapper struct{ v1alpha1.Canary }

// MakeCanary returns a blue/green Canary of the Deployment NAME on port 9898.
func MakeCanary(name, namespace string) *CanaryWrapper {
	return &CanaryWrapper{v1alpha1.Canary{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: v1alpha1.CanaryKind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: v1alpha1.CanarySpec{
			TargetRef: v1alpha1.TargetReference{APIVersion: "apps/v1", Kind: v1alpha1.DeploymentKind, Name: name},
			Service:   v1alpha1.CanaryService{Port: 9898},
			Routing:   v1alpha1.CanaryRouting{Provider: v1alpha1.KubernetesRouting},
		},
	}}
}

// Target sets spec.targetRef.
func (w *CanaryWrapper) Target(apiVersion, kind, name string) *CanaryWrapper {
	w.Spec.TargetRef = v1alpha1.TargetReference{APIVersion: apiVersion, Kind: kind, Name: name}
	return w
}

// ProgressDeadlineSeconds sets spec.progressDeadlineSeconds.
func (w *CanaryWrapper) ProgressDeadlineSeconds(s int32) *CanaryWrapper {
	w.Spec.ProgressDeadlineSeconds = ptr.To(s)
	return w
}

// Analysis sets spec.analysis.
func (w *CanaryWrapper) Analysis(a v1alpha1.CanaryAnalysis) *CanaryWrapper {
	w.Spec.Analysis = &a
	return w
}

// Routing sets spec.routing.
func (w *CanaryWrapper) Routing(r v1alpha1.CanaryRouting) *CanaryWrapper {
	w.Spec.Routing = r
	return w
}

// PortDiscovery sets spec.service.portDiscovery.
func (w *CanaryWrapper) PortDiscovery() *CanaryWrapper {
	w.Spec.Service.PortDiscovery = true
	return w
}

// UID sets metadata.uid, which the objects the Canary controls name in
// their owner references.
func (w *CanaryWrapper) UID(uid types.UID) *CanaryWrapper {
	w.Canary.UID = uid
	return w
}

// Annotation sets an annotation, e.g. a request (serin.dev/promote-request).
func (w *CanaryWrapper) Annotation(k, v string) *CanaryWrapper {
	if w.Annotations == nil {
		w.Annotations = map[string]string{}
	}
	w.Annotations[k] = v
	return w
}

// Gateway routes with the Gateway API (spec.routing.provider gatewayapi)
// through the Gateway namespace/name, added to spec.routing.gatewayRefs.
func (w *CanaryWrapper) Gateway(namespace, name string) *CanaryWrapper {
	w.Spec.Routing.Provider = v1alpha1.GatewayAPIRouting
	w.Spec.Routing.GatewayRefs = append(w.Spec.Routing.GatewayRefs, v1alpha1.GatewayReference{Namespace: namespace, Name: name})
	return w
}

// Hosts sets spec.routing.hosts.
func (w *CanaryWrapper) Hosts(hosts ...string) *CanaryWrapper {
	w.Spec.Routing.Hosts = hosts
	return w
}

// Webhook adds a webhook to spec.analysis.webhooks.
func (w *CanaryWrapper) Webhook(hook v1alpha1.CanaryWebhook) *CanaryWrapper {
	if w.Spec.Analysis == nil {
		w.Spec.Analysis = &v1alpha1.CanaryAnalysis{}
	}
	w.Spec.Analysis.Webhooks = append(w.Spec.Analysis.Webhooks, hook)
	return w
}

// Phase sets status.phase.
func (w *CanaryWrapper) Phase(p v1alpha1.CanaryPhase) *CanaryWrapper {
	w.Status.Phase = p
	return w
}

// Applied sets the spec hash under analysis and its Flux revision
// (status.lastAppliedSpec, status.lastAttemptedRevision).
func (w *CanaryWrapper) Applied(spec, revision string) *CanaryWrapper {
	w.Status.LastAppliedSpec, w.Status.LastAttemptedRevision = spec, revision
	return w
}

// Promoted sets the spec hash the primary runs and its Flux revision
// (status.lastPromotedSpec, status.lastPromotedRevision).
func (w *CanaryWrapper) Promoted(spec, revision string) *CanaryWrapper {
	w.Status.LastPromotedSpec, w.Status.LastPromotedRevision = spec, revision
	return w
}

// Weight sets status.canaryWeight.
func (w *CanaryWrapper) Weight(weight int) *CanaryWrapper {
	w.Status.CanaryWeight = weight
	return w
}

// Checks sets status.iterations and status.failedChecks.
func (w *CanaryWrapper) Checks(iterations, failed int) *CanaryWrapper {
	w.Status.Iterations, w.Status.FailedChecks = iterations, failed
	return w
}

// TransitionedAt sets status.lastTransitionTime.
func (w *CanaryWrapper) TransitionedAt(t time.Time) *CanaryWrapper {
	w.Status.LastTransitionTime = ptr.To(metav1.NewMicroTime(t))
	return w
}

// Obj returns the Canary.
func (w *CanaryWrapper) Obj() *v1alpha1.Canary { return &w.Canary }
