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
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/internal/testing/testobj"
	"github.com/serin-dev/serin/internal/workload"
	"github.com/serin-dev/serin/routing"
)

// restorePrimary rolls a failed primary back to the template of the last
// promoted revision, from its own ReplicaSets or else from what serin
// recorded at the promotion, while the canary keeps serving: the routes
// are not touched. It stops, for a person to act, rather than run the good
// template with the bad revision's config data.
func TestRestorePrimary(t *testing.T) {
	// halted is a promotion of v2 halted with the canary serving it all.
	halted := func(c *testobj.CanaryWrapper) *v1alpha1.Canary {
		obj := c.Phase(v1alpha1.PhaseHalted).Applied("v2", "main@sha1:v2").Promoted("v1", "main@sha1:v1").Weight(100).Obj()
		transition(obj, v1alpha1.PhaseHalted, actionNow.Add(-time.Minute), v1alpha1.HaltedReason, "promotion of revision v2 halted")
		return obj
	}
	v1 := func() *testobj.DeploymentWrapper { return testobj.MakeDeployment("podinfo", "apps").Replicas(2) }
	v2 := func() *testobj.DeploymentWrapper { return v1().Image(newImage) }
	// replicaSetOf is the ReplicaSet in which the primary ran spec.
	replicaSetOf := func(primary *appsv1.Deployment, spec string) *appsv1.ReplicaSet {
		tpl := primary.Spec.Template.DeepCopy()
		tpl.Annotations[specHashAnnotation] = spec
		tpl.Labels[appsv1.DefaultDeploymentUniqueLabelKey] = spec
		return &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "podinfo-primary-" + spec, Labels: tpl.Labels},
			Spec:       appsv1.ReplicaSetSpec{Selector: primary.Spec.Selector, Template: *tpl},
		}
	}
	// world is the target and the primary at v2, the primary's ReplicaSet
	// of v1 when withHistory, and more.
	world := func(c *v1alpha1.Canary, target *appsv1.Deployment, withHistory bool, more ...client.Object) []client.Object {
		objs := append([]client.Object{target, primaryOf(c, target, "v2")}, more...)
		if withHistory {
			objs = append(objs, replicaSetOf(primaryOf(c, v1().Obj(), "v1"), "v1"))
		}
		return objs
	}
	restoring := actionWant{
		result:     ctrl.Result{RequeueAfter: 600 * time.Second},
		conditions: []metav1.Condition{ready(metav1.ConditionFalse, v1alpha1.HaltedReason)},
		writes:     []string{"patch Deployment/podinfo-primary"},
		events:     []string{"Warning " + v1alpha1.RestoringPrimaryReason},
	}
	halt := []metav1.Condition{ready(metav1.ConditionFalse, v1alpha1.HaltedReason)}
	primaryRuns := func(image, spec string) func(t *testing.T, f *actionFixture, _ *v1alpha1.Canary) {
		return func(t *testing.T, f *actionFixture, _ *v1alpha1.Canary) {
			p := &appsv1.Deployment{}
			if !f.get("podinfo-primary", p) {
				t.Fatal("no primary")
			}
			if got := p.Spec.Template.Spec.Containers[0].Image; got != image || p.Annotations[specHashAnnotation] != spec {
				t.Errorf("primary runs %s at %s, want %s at %s", got, p.Annotations[specHashAnnotation], image, spec)
			}
			if _, ok := p.Spec.Template.Labels[appsv1.DefaultDeploymentUniqueLabelKey]; ok {
				t.Errorf("primary template keeps the ReplicaSet's %s label", appsv1.DefaultDeploymentUniqueLabelKey)
			}
		}
	}

	// The config podinfo-config: v1 ran with level=info, v2 with
	// level=debug, which the primary's copy holds since the promotion.
	configured := func(c *v1alpha1.Canary, sourceLevel, copyLevel string) []client.Object {
		source := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "podinfo-config"}, Data: map[string]string{"level": sourceLevel}}
		copied := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "podinfo-config-primary"}, Data: map[string]string{"level": copyLevel}}
		if err := controllerutil.SetControllerReference(c, copied, canaryScheme()); err != nil {
			t.Fatal(err)
		}
		v1Configs := map[string]string{"ConfigMap/podinfo-config": workload.ConfigDataHash(map[string][]byte{"level": []byte("info")})}
		return []client.Object{source, copied, recordOf(c, primaryOf(c, v1().EnvFromConfigMap("podinfo-config").Obj(), "v1"), "v1", v1Configs)}
	}

	fromHistory, fromRecord, badConfig, revertedConfig, stripped := halted(weightedPodinfo()), halted(weightedPodinfo()), halted(weightedPodinfo()),
		halted(weightedPodinfo()), halted(weightedPodinfo())
	gitReverted := observed("v1", 100)
	gitReverted.Target.TrackedConfigs = map[string]string{"ConfigMap/podinfo-config": "c1"}
	serviceTarget := func() *v1alpha1.Canary { return halted(weightedPodinfo().Target("v1", "Service", "podinfo")) }
	previous := `{"hash":"v1","backend":{"selector":{"app":"podinfo","version":"v1"},"ports":[{"name":"http","protocol":"TCP","port":9898,"targetPort":"http"}]}}`
	servicePrimary := func(annotated bool) *corev1.Service {
		s := testobj.MakeService("podinfo-primary", "apps").Selector(map[string]string{"app": "podinfo", "version": "v2"}).Annotation(specHashAnnotation, "v2")
		if annotated {
			s.Annotation(workload.PreviousSpecAnnotation, previous)
		}
		svc := s.Obj()
		if err := controllerutil.SetControllerReference(serviceTarget(), svc, canaryScheme()); err != nil {
			t.Fatal(err)
		}
		return svc
	}

	cases := map[string]actionCase{
		"from the primary's ReplicaSet of v1, the canary serving meanwhile": {
			canary: fromHistory,
			objs:   world(fromHistory, v2().Obj(), true),
			routes: weights(routing.Canary(100)),
			obs:    observed("v2", 100),
			want:   restoring,
			check:  primaryRuns(goodImage, "v1"),
		},
		"a primary whose annotations were all removed: restored all the same": {
			canary: stripped,
			objs: func() []client.Object {
				objs := world(stripped, v2().Obj(), true)
				objs[1].SetAnnotations(nil)
				return objs
			}(),
			routes: weights(routing.Canary(100)),
			obs:    observed("v2", 100),
			want:   restoring,
			check:  primaryRuns(goodImage, "v1"),
		},
		"no ReplicaSet of v1 left: from the revision recorded at its promotion": {
			canary: fromRecord,
			objs:   world(fromRecord, v2().Obj(), false, recordOf(fromRecord, primaryOf(fromRecord, v1().Obj(), "v1"), "v1", nil)),
			routes: weights(routing.Canary(100)),
			obs:    observed("v2", 100),
			want:   restoring,
			check:  primaryRuns(goodImage, "v1"),
		},
		"neither: a person must act, the primary as it is": {
			canary: halted(weightedPodinfo()),
			objs:   world(halted(weightedPodinfo()), v2().Obj(), false),
			obs:    observed("v2", 100),
			want:   actionWant{err: stalls(v1alpha1.HaltedReason), conditions: halt},
			check:  primaryRuns(newImage, "v2"),
		},
		"the copy of a config holds v2's data, the source too: a person must act": {
			canary: badConfig,
			objs:   world(badConfig, v2().EnvFromConfigMap("podinfo-config").Obj(), true, configured(badConfig, "debug", "debug")...),
			obs:    observed("v2", 100),
			want:   actionWant{err: stalls(v1alpha1.HaltedReason), conditions: halt},
			check:  primaryRuns(newImage, "v2"),
		},
		"Git reverted the config: the copy restored from the source, then the template": {
			canary: revertedConfig,
			objs:   world(revertedConfig, v1().EnvFromConfigMap("podinfo-config").Obj(), true, configured(revertedConfig, "info", "debug")...),
			obs:    gitReverted,
			want: actionWant{
				result:     restoring.result,
				conditions: restoring.conditions,
				writes:     []string{"update ConfigMap/podinfo-config-primary", "patch Deployment/podinfo-primary"},
				events:     restoring.events,
			},
			check: func(t *testing.T, f *actionFixture, _ *v1alpha1.Canary) {
				copied := &corev1.ConfigMap{}
				if f.get("podinfo-config-primary", copied); copied.Data["level"] != "info" {
					t.Errorf("the primary's copy holds %v, want v1's level=info", copied.Data)
				}
			},
		},
		"the primary is gone": {
			canary: halted(weightedPodinfo()),
			objs:   []client.Object{v2().Obj()},
			obs:    observed("v2", 100),
			want:   actionWant{err: notFound, conditions: halt},
		},
		"the ReplicaSets cannot be listed": {
			canary: halted(weightedPodinfo()),
			objs:   world(halted(weightedPodinfo()), v2().Obj(), true),
			fail:   []string{"list ReplicaSetList"},
			obs:    observed("v2", 100),
			want:   actionWant{err: injected, conditions: halt},
		},
		"the patch fails: no event": {
			canary: halted(weightedPodinfo()),
			objs:   world(halted(weightedPodinfo()), v2().Obj(), true),
			fail:   []string{"patch Deployment/podinfo-primary"},
			obs:    observed("v2", 100),
			want:   actionWant{err: injected, conditions: halt, writes: []string{"patch Deployment/podinfo-primary"}},
		},
		"a Service target: the primary Service back to the backend it had before": {
			canary: serviceTarget(),
			objs:   []client.Object{testobj.MakeService("podinfo", "apps").Obj(), servicePrimary(true)},
			obs:    observed("v2", 100),
			want: actionWant{
				result:     restoring.result,
				conditions: halt,
				writes:     []string{"update Service/podinfo-primary"},
				events:     restoring.events,
			},
			check: func(t *testing.T, f *actionFixture, _ *v1alpha1.Canary) {
				svc := &corev1.Service{}
				if f.get("podinfo-primary", svc); svc.Spec.Selector["version"] != "v1" || svc.Annotations[specHashAnnotation] != "v1" {
					t.Errorf("primary Service selects %v at %s, want version v1 at v1", svc.Spec.Selector, svc.Annotations[specHashAnnotation])
				}
			},
		},
		"a Service target without its previous backend: a person must act": {
			canary: serviceTarget(),
			objs:   []client.Object{testobj.MakeService("podinfo", "apps").Obj(), servicePrimary(false)},
			obs:    observed("v2", 100),
			want:   actionWant{err: stalls(v1alpha1.HaltedReason), conditions: halt},
		},
	}
	runActionCases(t, cases, func(ctx context.Context, r *CanaryReconciler, obj *v1alpha1.Canary, obs rollout.Observation, _ rollout.Action) (ctrl.Result, error) {
		return r.restorePrimary(ctx, obj, obs)
	})
}
