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
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/internal/testing/testobj"
	"github.com/serin-dev/serin/routing"
)

// syncGeneratedServices re-creates the generated objects that drifted or
// were deleted, keeping the weights in force; the primary's config copies
// only while the target is on the promoted spec, since the sources then
// hold the promoted data. What exists and is not the Canary's is refused.
func TestSyncGeneratedServices(t *testing.T) {
	services := []string{"create Service/podinfo", "create Service/podinfo-primary", "create Service/podinfo-canary"}
	// analysing is v2 analysed at weight 25, v1 promoted.
	analysing := func(c *testobj.CanaryWrapper) *v1alpha1.Canary {
		return c.Phase(v1alpha1.PhaseProgressing).Applied("v2", "main@sha1:v2").Promoted("v1", "main@sha1:v1").Weight(25).Obj()
	}
	withConfig := func() client.Object {
		return testobj.MakeDeployment("podinfo", "apps").Replicas(2).EnvFromConfigMap("podinfo-config").Obj()
	}
	config := func() client.Object {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "podinfo-config"}, Data: map[string]string{"level": "debug"}}
	}
	tracking := func(spec string) rollout.Observation {
		o := observed(spec, 25)
		o.Target.TrackedConfigs = map[string]string{"ConfigMap/podinfo-config": "c-" + spec}
		return o
	}
	// idempotent syncs again: everything is in place, nothing is written,
	// and the weights are those in force.
	idempotent := func(t *testing.T, f *actionFixture, obj *v1alpha1.Canary) {
		written := append([]string(nil), f.calls.Writes...)
		if _, err := f.r.syncGeneratedServices(context.Background(), obj, observed(obj.Status.LastAppliedSpec, 25)); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(written, f.calls.Writes); diff != "" {
			t.Errorf("a second sync wrote (-first +both):\n%s", diff)
		}
		if routes, _ := f.router.GetRoutes(context.Background(), obj, routing.Target{ApexService: "podinfo"}); routes.Weights != routing.Canary(25) {
			t.Errorf("weights %+v, want the canary's 25 kept", routes.Weights)
		}
	}
	// withMetadata is a Canary with labels and annotations for each
	// generated Service (spec.service.apex, primary, canary).
	withMetadata := func() *v1alpha1.Canary {
		c := analysing(weightedPodinfo())
		c.Spec.Service.Apex = &v1alpha1.CustomMetadata{Labels: map[string]string{"role": "apex"}}
		c.Spec.Service.Primary = &v1alpha1.CustomMetadata{Annotations: map[string]string{"example.com/side": "primary"}}
		c.Spec.Service.Canary = &v1alpha1.CustomMetadata{Labels: map[string]string{"role": "canary"}, Annotations: map[string]string{"example.com/side": "canary"}}
		return c
	}
	carriesMetadata := func(t *testing.T, f *actionFixture, obj *v1alpha1.Canary) {
		for name, want := range map[string]*v1alpha1.CustomMetadata{"podinfo": obj.Spec.Service.Apex, "podinfo-primary": obj.Spec.Service.Primary, "podinfo-canary": obj.Spec.Service.Canary} {
			svc := &corev1.Service{}
			if !f.get(name, svc) {
				t.Fatalf("service %s missing", name)
			}
			if !hasAll(svc.Labels, want.GetLabels()) || !hasAll(svc.Annotations, want.GetAnnotations()) || svc.Labels["serin.dev/canary"] != "podinfo" {
				t.Errorf("service %s has labels %v and annotations %v, want %+v and serin's", name, svc.Labels, svc.Annotations, want)
			}
		}
		target := &appsv1.Deployment{}
		f.get("podinfo", target)
		if inSync, err := f.r.podServicesInSync(context.Background(), obj, deploymentPods(target)); err != nil || !inSync {
			t.Errorf("services in sync = %v, %v after the sync", inSync, err)
		}
		// A label set on the Canary afterwards: the Services are out of sync.
		obj.Spec.Service.Canary.Labels["tier"] = "web"
		if inSync, err := f.r.podServicesInSync(context.Background(), obj, deploymentPods(target)); err != nil || inSync {
			t.Errorf("services in sync = %v, %v with a new label to set", inSync, err)
		}
	}
	// serviceTargetMetadata checks a Service target's copies carry their
	// metadata, and that new metadata for the primary copy is set without
	// touching its backend.
	serviceTargetMetadata := func(t *testing.T, f *actionFixture, obj *v1alpha1.Canary) {
		primary := &corev1.Service{}
		f.get("podinfo-primary", primary)
		hash := primary.Annotations[specHashAnnotation]
		if !hasCustomMetadata(primary, obj.Spec.Service.Primary) {
			t.Errorf("primary copy labels %v", primary.Labels)
		}
		obj.Spec.Service.Primary.Labels["tier"] = "web"
		if _, err := f.r.syncGeneratedServices(context.Background(), obj, observed("v2", 25)); err != nil {
			t.Fatal(err)
		}
		f.get("podinfo-primary", primary)
		if primary.Labels["tier"] != "web" || primary.Annotations[specHashAnnotation] != hash {
			t.Errorf("primary copy after new metadata: labels %v, spec hash %q (was %q)", primary.Labels, primary.Annotations[specHashAnnotation], hash)
		}
	}
	serviceTarget := analysing(weightedPodinfo().Target("v1", "Service", "podinfo"))
	serviceTarget.Spec.Service.Primary = &v1alpha1.CustomMetadata{Labels: map[string]string{"role": "primary"}}
	cases := map[string]actionCase{
		"a Service target with custom metadata: on its copies": {
			canary: serviceTarget,
			objs:   []client.Object{testobj.MakeService("podinfo", "apps").Obj()},
			routes: weights(routing.Canary(25)),
			obs:    observed("v2", 25),
			want:   actionWant{writes: []string{"create Service/podinfo-canary", "create Service/podinfo-primary"}},
			check:  serviceTargetMetadata,
		},
		"custom metadata: on each Service": {
			canary: withMetadata(),
			objs:   []client.Object{podinfoTarget(2)},
			routes: weights(routing.Canary(25)),
			obs:    observed("v2", 25),
			want:   actionWant{writes: services},
			check:  carriesMetadata,
		},
		"the Services deleted: re-created, the weights kept": {
			canary: analysing(weightedPodinfo()),
			objs:   []client.Object{podinfoTarget(2)},
			routes: weights(routing.Canary(25)),
			obs:    observed("v2", 25),
			want:   actionWant{writes: services},
			check:  idempotent,
		},
		"the target on the promoted spec: the config copies first": {
			canary: weightedPodinfo().Phase(v1alpha1.PhaseSucceeded).Applied("v1", "main@sha1:v1").Promoted("v1", "main@sha1:v1").Obj(),
			objs:   []client.Object{withConfig(), config()},
			routes: weights(routing.AllPrimary),
			obs:    tracking("v1"),
			want:   actionWant{writes: append([]string{"create ConfigMap/podinfo-config-primary"}, services...)},
		},
		"the target on a new spec: the copies keep the promoted data": {
			canary: analysing(weightedPodinfo()),
			objs:   []client.Object{withConfig(), config()},
			routes: weights(routing.Canary(25)),
			obs:    tracking("v2"),
			want:   actionWant{writes: services},
		},
		"a Service someone else made: refused, nothing after it written": {
			canary: analysing(weightedPodinfo()),
			objs:   []client.Object{podinfoTarget(2), legacyService("podinfo-primary")},
			routes: weights(routing.Canary(25)),
			obs:    observed("v2", 25),
			want:   actionWant{err: refused("Service", "podinfo-primary"), writes: services[:1]},
		},
		"the routes cannot be reconciled": {
			canary:     analysing(weightedPodinfo()),
			objs:       []client.Object{podinfoTarget(2)},
			routes:     weights(routing.Canary(25)),
			routerDown: true,
			obs:        observed("v2", 25),
			want:       actionWant{err: errContaining("routes unreachable"), writes: services},
		},
		"the target is gone": {
			canary: analysing(weightedPodinfo()),
			routes: weights(routing.Canary(25)),
			obs:    observed("v2", 25),
			want:   actionWant{err: notFound},
		},
		"a Service target: its copies re-created": {
			canary: analysing(weightedPodinfo().Target("v1", "Service", "podinfo")),
			objs:   []client.Object{testobj.MakeService("podinfo", "apps").Obj()},
			routes: weights(routing.Canary(25)),
			obs:    observed("v2", 25),
			want:   actionWant{writes: []string{"create Service/podinfo-canary", "create Service/podinfo-primary"}},
			check:  idempotent,
		},
	}
	runActionCases(t, cases, func(ctx context.Context, r *CanaryReconciler, obj *v1alpha1.Canary, obs rollout.Observation, _ rollout.Action) (ctrl.Result, error) {
		return r.syncGeneratedServices(ctx, obj, obs)
	})
}
