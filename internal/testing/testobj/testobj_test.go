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

package testobj_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
	"github.com/serin-dev/serin/internal/workload"
)

// The builders make objects serin takes as they are: a Deployment and a
// Service it can roll out, a Canary whose helpers read what was set.
func TestBuildersMakeObjectsSerinAccepts(t *testing.T) {
	d := testobj.MakeDeployment("podinfo", "apps").Replicas(3).Label("team", "payments").EnvFromConfigMap("podinfo-config").Obj()
	if err := workload.ValidateTarget(d); err != nil {
		t.Errorf("MakeDeployment: %v", err)
	}
	if d.Labels["team"] != "payments" || d.Spec.Template.Labels["team"] != "payments" || d.Spec.Selector.MatchLabels["team"] != "" {
		t.Errorf("Label sets %v on the object, %v on the pods, %v in the selector; want the first two", d.Labels, d.Spec.Template.Labels, d.Spec.Selector.MatchLabels)
	}
	if diff := cmp.Diff([]workload.ConfigRef{{Kind: "ConfigMap", Name: "podinfo-config"}}, workload.ConfigRefs(&d.Spec.Template)); diff != "" {
		t.Errorf("EnvFromConfigMap: tracked configs (-want +got):\n%s", diff)
	}
	if !workload.MayLoseAllReadyPods(testobj.MakeDeployment("podinfo", "apps").Recreate().Obj()) {
		t.Error("Recreate: the strategy keeps ready pods")
	}
	if err := workload.ValidateServiceTarget(testobj.MakeService("podinfo", "apps").Obj()); err != nil {
		t.Errorf("MakeService: %v", err)
	}

	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	c := testobj.MakeCanary("podinfo", "apps").UID("uid-podinfo").Gateway("gateways", "public").Hosts("podinfo.example.com").
		Webhook(v1alpha1.CanaryWebhook{Name: "smoke", Type: v1alpha1.PreRolloutHook, URL: "http://smoke"}).
		Annotation(v1alpha1.PromoteRequestAnnotation, "now").
		Phase(v1alpha1.PhaseProgressing).Applied("v2", "main@sha1:v2").Promoted("v1", "main@sha1:v1").Weight(20).Checks(1, 2).TransitionedAt(now).Obj()
	if c.GetRoutingProvider() != v1alpha1.GatewayAPIRouting || c.Spec.Routing.GatewayRefs[0].Namespace != "gateways" || c.UID != "uid-podinfo" {
		t.Errorf("Gateway, UID: %+v %s", c.Spec.Routing, c.UID)
	}
	want := v1alpha1.CanaryStatus{
		Phase: v1alpha1.PhaseProgressing, CanaryWeight: 20, Iterations: 1, FailedChecks: 2,
		LastAppliedSpec: "v2", LastAttemptedRevision: "main@sha1:v2", LastPromotedSpec: "v1", LastPromotedRevision: "main@sha1:v1",
		LastTransitionTime: c.Status.LastTransitionTime,
	}
	if diff := cmp.Diff(want, c.Status); diff != "" || !c.Status.LastTransitionTime.Time.Equal(now) {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	if len(c.Spec.Analysis.Webhooks) != 1 || c.Annotations[v1alpha1.PromoteRequestAnnotation] != "now" {
		t.Errorf("Webhook, Annotation: %+v %v", c.Spec.Analysis, c.Annotations)
	}
}
