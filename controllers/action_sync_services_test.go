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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/internal/testobj"
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
	cases := map[string]actionCase{
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
