package controllers

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testobj"
	"github.com/serin-dev/serin/internal/workload"
)

// Every write of every action fails once, in turn, during a whole rollout
// (initialization, analysis, promotion, finalising): the next reconciles
// finish the job. No revision is dropped (a status that records progress
// is written only after the writes it stands for), and no write order
// sends traffic to a side with no ready replica.
func TestWriteFailureAtEveryWrite(t *testing.T) {
	scenarios := map[string]func() *v1alpha1.Canary{
		"gatewayapi weights": func() *v1alpha1.Canary {
			return testobj.MakeCanary("podinfo", "apps").
				Routing(v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting, GatewayRefs: []v1alpha1.GatewayReference{{Name: "public", Namespace: "gateways"}}}).
				Analysis(v1alpha1.CanaryAnalysis{Interval: &metav1.Duration{Duration: 10 * time.Second}, StepWeight: 25, MaxWeight: 50}).Obj()
		},
		"kubernetes blue/green": func() *v1alpha1.Canary {
			return testobj.MakeCanary("podinfo", "apps").
				Analysis(v1alpha1.CanaryAnalysis{Interval: &metav1.Duration{Duration: 10 * time.Second}, Iterations: 2}).Obj()
		},
	}
	for name, canary := range scenarios {
		t.Run(name, func(t *testing.T) {
			rollout := func(failAt int) *faultWorld {
				c := canary()
				c.Finalizers = []string{v1alpha1.CanaryFinalizer}
				w := newFaultWorld(t, failAt, c, &testobj.MakeDeployment("podinfo", "apps").Replicas(2).Deployment)
				w.runUntil("initialized", func(c *v1alpha1.Canary) bool { return c.Status.Phase == v1alpha1.PhaseInitialized })
				w.setImage("podinfo", "ghcr.io/stefanprodan/podinfo:6.1.0")
				w.runUntil("succeeded", func(c *v1alpha1.Canary) bool { return c.Status.Phase == v1alpha1.PhaseSucceeded })
				return w
			}
			clean := rollout(0)
			total := len(clean.writes)
			if total < 10 {
				t.Fatalf("a clean rollout made %d writes: %v", total, clean.writes)
			}
			for k := 1; k <= total; k++ {
				w := rollout(k)
				c := w.canary()
				target, primary := w.deployment("podinfo"), w.deployment("podinfo-primary")
				want := workload.SpecHash(&target.Spec.Template, nil)
				switch {
				case c.Status.LastPromotedSpec != want || c.Status.LastAppliedSpec != want:
					t.Errorf("fail at %q: applied %s promoted %s, want %s", w.writes[k-1], c.Status.LastAppliedSpec, c.Status.LastPromotedSpec, want)
				case primary.Spec.Template.Annotations[workload.SpecHashAnnotation] != want:
					t.Errorf("fail at %q: the primary runs %s, want %s", w.writes[k-1], primary.Spec.Template.Annotations[workload.SpecHashAnnotation], want)
				case primary.Spec.Template.Spec.Containers[0].Image != "ghcr.io/stefanprodan/podinfo:6.1.0":
					t.Errorf("fail at %q: the primary runs %s", w.writes[k-1], primary.Spec.Template.Spec.Containers[0].Image)
				case *target.Spec.Replicas != 0:
					t.Errorf("fail at %q: the canary keeps %d replicas after the promotion", w.writes[k-1], *target.Spec.Replicas)
				case c.Status.CanaryWeight != 0:
					t.Errorf("fail at %q: canary weight %d after the promotion", w.writes[k-1], c.Status.CanaryWeight)
				}
			}
			t.Logf("%s: a failure injected at each of the %d writes of a rollout, each finished: %v", name, total, client.ObjectKeyFromObject(clean.canary()))
		})
	}
}
