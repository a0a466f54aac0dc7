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
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// weightedCanary is a Canary of podinfo with an HTTPRoute, 25% steps to 50%.
func weightedCanary() *v1alpha1.Canary {
	c := testobj.MakeCanary("podinfo", "apps").
		Routing(v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting, GatewayRefs: []v1alpha1.GatewayReference{{Name: "public", Namespace: "gateways"}}}).
		Analysis(v1alpha1.CanaryAnalysis{Interval: &metav1.Duration{Duration: 10 * time.Second}, StepWeight: 25, MaxWeight: 50}).Obj()
	c.Finalizers = []string{v1alpha1.CanaryFinalizer}
	return c
}

func isPhase(p v1alpha1.CanaryPhase) func(*v1alpha1.Canary) bool {
	return func(c *v1alpha1.Canary) bool { return c.Status.Phase == p }
}

func atCanaryWeight(weight int) func(*v1alpha1.Canary) bool {
	return func(c *v1alpha1.Canary) bool { return c.Status.CanaryWeight == weight }
}

// rolloutAt25 is the fake world of a Canary analysing 6.1.0 at weight 25.
func rolloutAt25(t *testing.T) *faultWorld {
	w := newFaultWorld(t, 0, weightedCanary(), &testobj.MakeDeployment("podinfo", "apps").Replicas(2).Deployment)
	w.runUntil("initialized", isPhase(v1alpha1.PhaseInitialized))
	w.setImage("podinfo", "ghcr.io/stefanprodan/podinfo:6.1.0")
	w.runUntil("at weight 25", atCanaryWeight(25))
	return w
}

// The faults an operator causes, each in the reconciler's fake world; the
// e2e tier repeats the first ones on the testbed.
func TestFaultRepairs(t *testing.T) {
	ctx := context.Background()
	deleteObj := func(o client.Object) func(context.Context, client.Client) error {
		return func(ctx context.Context, c client.Client) error { return c.Delete(ctx, o) }
	}
	primaryKey := types.NamespacedName{Namespace: "apps", Name: "podinfo-primary"}

	t.Run("a deleted primary is re-created; Ready is not True until it serves", func(t *testing.T) {
		w := newFaultWorld(t, 0, weightedCanary(), &testobj.MakeDeployment("podinfo", "apps").Replicas(3).Deployment)
		w.runUntil("initialized", isPhase(v1alpha1.PhaseInitialized))
		w.do(deleteObj(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "podinfo-primary"}}))
		if _, err := w.r.Reconcile(ctx, reconcileRequest(w.key)); err != nil {
			t.Fatal(err)
		}
		primary := w.deployment("podinfo-primary")
		if *primary.Spec.Replicas != 3 || primary.Spec.Template.Spec.Containers[0].Image != "ghcr.io/stefanprodan/podinfo:6.0.0" {
			t.Errorf("re-created primary: %d replicas of %s", *primary.Spec.Replicas, primary.Spec.Template.Spec.Containers[0].Image)
		}
		// Its pods are not ready yet: the Canary must not say Ready.
		if _, err := w.r.Reconcile(ctx, reconcileRequest(w.key)); err != nil {
			t.Fatal(err)
		}
		if c := w.canary(); conditions.IsReady(c) || conditions.GetReason(c, meta.ReadyCondition) != v1alpha1.PrimaryUnavailableReason {
			t.Errorf("Ready %v (%s: %s) while the re-created primary has no ready pod", conditions.IsReady(c),
				conditions.GetReason(c, meta.ReadyCondition), conditions.GetMessage(c, meta.ReadyCondition))
		}
		w.react()
		w.runUntil("ready again", func(c *v1alpha1.Canary) bool { return conditions.IsReady(c) })
	})

	t.Run("a primary deleted mid-rollout comes back on the promoted revision, never the one under analysis", func(t *testing.T) {
		w := rolloutAt25(t)
		w.do(deleteObj(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "podinfo-primary"}}))
		if _, err := w.r.Reconcile(ctx, reconcileRequest(w.key)); err != nil {
			t.Fatal(err)
		}
		if p, c := w.routeWeights(); p != 0 || c != 100 {
			t.Errorf("weights %d/%d with the primary deleted, want all on the serving canary", p, c)
		}
		w.runUntil("primary re-created", func(*v1alpha1.Canary) bool {
			d := &appsv1.Deployment{}
			return w.c.Get(ctx, primaryKey, d) == nil
		})
		if img := w.deployment("podinfo-primary").Spec.Template.Spec.Containers[0].Image; img != "ghcr.io/stefanprodan/podinfo:6.0.0" {
			t.Errorf("re-created primary runs %s, want the promoted 6.0.0", img)
		}
		w.runUntil("succeeded", isPhase(v1alpha1.PhaseSucceeded))
	})

	t.Run("a target deleted mid-rollout: traffic back to the primary, then stalled", func(t *testing.T) {
		w := rolloutAt25(t)
		w.do(deleteObj(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "podinfo"}}))
		w.runUntil("stalled", func(c *v1alpha1.Canary) bool { return conditions.IsStalled(c) })
		if p, c := w.routeWeights(); p != 100 || c != 0 {
			t.Errorf("weights %d/%d after the target was deleted, want all on the primary", p, c)
		}
		if c := w.canary(); conditions.GetReason(c, meta.StalledCondition) != v1alpha1.TargetNotFoundReason {
			t.Errorf("stalled for %s", conditions.GetReason(c, meta.StalledCondition))
		}
	})

	t.Run("a canary that loses every ready pod mid-analysis is shielded at once", func(t *testing.T) {
		w := rolloutAt25(t)
		w.do(func(ctx context.Context, c client.Client) error {
			d := &appsv1.Deployment{}
			if err := c.Get(ctx, types.NamespacedName{Namespace: "apps", Name: "podinfo"}, d); err != nil {
				return err
			}
			d.Status.ReadyReplicas, d.Status.AvailableReplicas = 0, 0
			return c.Status().Update(ctx, d)
		})
		if _, err := w.r.Reconcile(ctx, reconcileRequest(w.key)); err != nil {
			t.Fatal(err)
		}
		if p, c := w.routeWeights(); p != 100 || c != 0 {
			t.Errorf("weights %d/%d with no canary pod ready, want all on the primary at once", p, c)
		}
	})

	t.Run("weights the status lost (a kill between the two writes) get a whole interval", func(t *testing.T) {
		w := rolloutAt25(t)
		before := w.canary().Status.LastTransitionTime.Time
		// The route got weight 50; the status write that records it did not happen.
		w.do(func(ctx context.Context, c client.Client) error {
			rt := &gatewayv1.HTTPRoute{}
			if err := c.Get(ctx, types.NamespacedName{Namespace: "apps", Name: "podinfo"}, rt); err != nil {
				return err
			}
			for i := range rt.Spec.Rules[0].BackendRefs {
				rt.Spec.Rules[0].BackendRefs[i].Weight = ptr.To(int32(50))
			}
			return c.Update(ctx, rt)
		})
		w.react()
		w.now = before.Add(10 * time.Second) // the step after 25 is due
		if _, err := w.r.Reconcile(ctx, reconcileRequest(w.key)); err != nil {
			t.Fatal(err)
		}
		c := w.canary()
		if c.Status.CanaryWeight != 50 || !c.Status.LastTransitionTime.Time.Equal(w.now) {
			t.Errorf("status weight %d since %s; want 50 recorded with the step clock restarted at %s", c.Status.CanaryWeight, c.Status.LastTransitionTime.Time, w.now)
		}
	})

	t.Run("autoscalerRef: the primary gets its copy of the HPA, kept in sync", func(t *testing.T) {
		c := weightedCanary()
		c.Spec.AutoscalerRef = &v1alpha1.AutoscalerReference{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler", Name: "podinfo"}
		hpa := &autoscalingv2.HorizontalPodAutoscaler{
			ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "podinfo"},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "podinfo"},
				MinReplicas:    ptr.To(int32(2)), MaxReplicas: 4,
			},
		}
		w := newFaultWorld(t, 0, c, hpa, &testobj.MakeDeployment("podinfo", "apps").Replicas(2).Deployment)
		w.runUntil("initialized", isPhase(v1alpha1.PhaseInitialized))
		primaryHPA := func() *autoscalingv2.HorizontalPodAutoscaler {
			got := &autoscalingv2.HorizontalPodAutoscaler{}
			w.do(func(ctx context.Context, c client.Client) error {
				return c.Get(ctx, types.NamespacedName{Namespace: "apps", Name: "podinfo-primary"}, got)
			})
			return got
		}
		if got := primaryHPA(); got.Spec.ScaleTargetRef.Name != "podinfo-primary" || got.Spec.MaxReplicas != 4 || *got.Spec.MinReplicas != 2 {
			t.Errorf("primary HPA %+v", got.Spec)
		}
		// Git raises maxReplicas; an operator deletes the primary's copy.
		w.do(func(ctx context.Context, c client.Client) error {
			hpa.Spec.MaxReplicas = 8
			if err := c.Update(ctx, hpa); err != nil {
				return err
			}
			return c.Delete(ctx, primaryHPA())
		})
		w.runUntil("the primary HPA back, in sync", func(*v1alpha1.Canary) bool {
			got := &autoscalingv2.HorizontalPodAutoscaler{}
			return w.c.Get(ctx, types.NamespacedName{Namespace: "apps", Name: "podinfo-primary"}, got) == nil && got.Spec.MaxReplicas == 8
		})
	})

	t.Run("without an autoscaler, replicas changed in Git reach the primary on promotion", func(t *testing.T) {
		w := newFaultWorld(t, 0, weightedCanary(), &testobj.MakeDeployment("podinfo", "apps").Replicas(2).Deployment)
		w.runUntil("initialized", isPhase(v1alpha1.PhaseInitialized))
		w.do(func(ctx context.Context, c client.Client) error {
			d := &appsv1.Deployment{}
			if err := c.Get(ctx, types.NamespacedName{Namespace: "apps", Name: "podinfo"}, d); err != nil {
				return err
			}
			d.Spec.Replicas = ptr.To(int32(5)) // Flux applies the commit: replicas and image
			d.Spec.Template.Spec.Containers[0].Image = "ghcr.io/stefanprodan/podinfo:6.1.0"
			return c.Update(ctx, d)
		})
		w.runUntil("succeeded", isPhase(v1alpha1.PhaseSucceeded))
		if n := *w.deployment("podinfo-primary").Spec.Replicas; n != 5 {
			t.Errorf("the promoted primary runs %d replicas, want Git's 5", n)
		}
	})
}

// revertOnDeletion never hands all traffic to a revision that was not
// promoted: after a rollback, deleting the Canary leaves the primary
// serving and the failed target at zero.
func TestRevertOnDeletionKeepsAFailedRevisionAway(t *testing.T) {
	ctx := context.Background()
	c := weightedCanary()
	c.Spec.RevertOnDeletion = true
	w := newFaultWorld(t, 0, c, &testobj.MakeDeployment("podinfo", "apps").Replicas(2).Deployment)
	w.runUntil("initialized", isPhase(v1alpha1.PhaseInitialized))
	w.setImage("podinfo", "ghcr.io/stefanprodan/podinfo:6.1.0")
	w.runUntil("at weight 25", atCanaryWeight(25))
	w.do(func(ctx context.Context, cl client.Client) error {
		cur := w.canary()
		cur.Annotations = map[string]string{v1alpha1.AbortRequestAnnotation: "now"}
		return cl.Update(ctx, cur)
	})
	w.runUntil("failed", isPhase(v1alpha1.PhaseFailed))
	w.do(func(ctx context.Context, cl client.Client) error { return cl.Delete(ctx, w.canary()) })
	if _, err := w.r.Reconcile(ctx, reconcileRequest(w.key)); err != nil {
		t.Fatal(err)
	}
	if n := *w.deployment("podinfo").Spec.Replicas; n != 0 {
		t.Errorf("the failed revision was scaled to %d replicas on deletion", n)
	}
	primary := w.deployment("podinfo-primary")
	if len(primary.OwnerReferences) != 0 || primary.Spec.Template.Spec.Containers[0].Image != "ghcr.io/stefanprodan/podinfo:6.0.0" {
		t.Errorf("the primary (%s, owners %v) should keep serving, orphaned", primary.Spec.Template.Spec.Containers[0].Image, primary.OwnerReferences)
	}
}

// A restored primary gets its tracked configs back too: from Git when Git
// reverted them; and when Git did not, the restore stops and says so
// rather than run the good template with the bad data.
func TestRestorePrimaryRestoresConfigs(t *testing.T) {
	const broken = "ghcr.io/stefanprodan/podinfo:6.1.0"
	setup := func(t *testing.T, mutate func(*v1alpha1.Canary)) *faultWorld {
		c := weightedCanary()
		c.Spec.ProgressDeadlineSeconds = ptr.To(int32(30))
		mutate(c)
		d := testobj.MakeDeployment("podinfo", "apps").Replicas(2).Deployment
		d.Spec.Template.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "podinfo-config"}}}}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "podinfo-config"}, Data: map[string]string{"level": "v1"}}
		w := newFaultWorld(t, 0, c, cm, &d)
		w.brokenAsPrimary = broken
		w.runUntil("initialized", isPhase(v1alpha1.PhaseInitialized))
		// Git: new config data and an image that fails as the primary.
		w.do(func(ctx context.Context, cl client.Client) error {
			cm.Data["level"] = "v2"
			return cl.Update(ctx, cm)
		})
		w.setImage("podinfo", broken)
		w.runUntil("halted", isPhase(v1alpha1.PhaseHalted))
		return w
	}
	copyData := func(w *faultWorld) string {
		got := &corev1.ConfigMap{}
		w.do(func(ctx context.Context, cl client.Client) error {
			return cl.Get(ctx, types.NamespacedName{Namespace: "apps", Name: "podinfo-config-primary"}, got)
		})
		return got.Data["level"]
	}

	t.Run("Git reverts the config and the image", func(t *testing.T) {
		w := setup(t, func(*v1alpha1.Canary) {})
		if got := copyData(w); got != "v2" {
			t.Fatalf("the promoted copy holds %q, want the new v2", got)
		}
		w.do(func(ctx context.Context, cl client.Client) error {
			cm := &corev1.ConfigMap{}
			if err := cl.Get(ctx, types.NamespacedName{Namespace: "apps", Name: "podinfo-config"}, cm); err != nil {
				return err
			}
			cm.Data["level"] = "v1"
			return cl.Update(ctx, cm)
		})
		w.setImage("podinfo", "ghcr.io/stefanprodan/podinfo:6.0.0")
		w.runUntil("succeeded", isPhase(v1alpha1.PhaseSucceeded))
		if got := copyData(w); got != "v1" {
			t.Errorf("the restored primary's config copy holds %q, want the promoted v1", got)
		}
	})

	t.Run("RestorePrimary without a Git revert stops at the config", func(t *testing.T) {
		w := setup(t, func(c *v1alpha1.Canary) {
			c.Spec.Promotion = &v1alpha1.PromotionPolicy{FailurePolicy: v1alpha1.RestorePrimaryPolicy}
		})
		w.runUntil("stalled", func(c *v1alpha1.Canary) bool {
			return conditions.IsStalled(c) && strings.Contains(conditions.GetMessage(c, meta.StalledCondition), "its copy of ConfigMap/podinfo-config holds the new revision's data")
		})
		if img := w.deployment("podinfo-primary").Spec.Template.Spec.Containers[0].Image; img != broken {
			t.Errorf("the primary was restored to %s with the new config data", img)
		}
		if p, c := w.routeWeights(); c == 0 {
			t.Errorf("weights %d/%d: the canary must keep serving", p, c)
		}
	})
}

// A deleted config copy of the primary is re-created with the promoted data.
func TestDeletedConfigCopyIsRecreated(t *testing.T) {
	c := weightedCanary()
	d := testobj.MakeDeployment("podinfo", "apps").Replicas(2).Deployment
	d.Spec.Template.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "podinfo-config"}}}}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "podinfo-config"}, Data: map[string]string{"level": "v1"}}
	w := newFaultWorld(t, 0, c, cm, &d)
	w.runUntil("initialized", isPhase(v1alpha1.PhaseInitialized))
	w.do(func(ctx context.Context, cl client.Client) error {
		return cl.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "podinfo-config-primary"}})
	})
	w.runUntil("the copy back", func(*v1alpha1.Canary) bool {
		got := &corev1.ConfigMap{}
		return w.c.Get(context.Background(), types.NamespacedName{Namespace: "apps", Name: "podinfo-config-primary"}, got) == nil && got.Data["level"] == "v1"
	})
}
