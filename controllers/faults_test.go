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
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
	"github.com/serin-dev/serin/internal/workload"
)

const (
	goodImage   = "ghcr.io/stefanprodan/podinfo:6.0.0"
	newImage    = "ghcr.io/stefanprodan/podinfo:6.1.0"
	brokenImage = "ghcr.io/stefanprodan/podinfo:6.2.0-broken"
)

// writeScenario drives a fake world through the actions of one path of
// the state machine, and says what the end state must be.
type writeScenario struct {
	canary func() *v1alpha1.Canary
	// drive takes the world from a new Canary to the end of the path.
	drive func(w *faultWorld)
	// primaryImage is what the primary runs at the end, and canaryWeight
	// the canary's weight; the canary is scaled to zero.
	primaryImage string
	phase        v1alpha1.CanaryPhase
}

// Every write of every action fails once, in turn, on each path of the
// state machine (initialization, analysis, promotion, finalising,
// rollback, halt, restore, revert by Git): the next reconciles finish the
// job. No revision is dropped (a status that records progress is written
// only after the writes it stands for), and no write order sends traffic
// to a side with no ready replica (checked after every reconcile).
func TestWriteFailureAtEveryWrite(t *testing.T) {
	interval := &metav1.Duration{Duration: 10 * time.Second}
	gateway := func() *v1alpha1.Canary {
		return testobj.MakeCanary("podinfo", "apps").
			Routing(v1alpha1.CanaryRouting{Provider: v1alpha1.GatewayAPIRouting, GatewayRefs: []v1alpha1.GatewayReference{{Name: "public", Namespace: "gateways"}}}).
			Analysis(v1alpha1.CanaryAnalysis{Interval: interval, StepWeight: 25, MaxWeight: 50}).
			ProgressDeadlineSeconds(30).Obj()
	}
	initThen := func(then func(w *faultWorld)) func(w *faultWorld) {
		return func(w *faultWorld) {
			w.runUntil("initialized", isPhase(v1alpha1.PhaseInitialized))
			then(w)
		}
	}
	scenarios := map[string]writeScenario{
		"gatewayapi weights, promoted": {
			canary: gateway,
			drive: initThen(func(w *faultWorld) {
				w.setImage("podinfo", newImage)
				w.runUntil("succeeded", isPhase(v1alpha1.PhaseSucceeded))
			}),
			primaryImage: newImage, phase: v1alpha1.PhaseSucceeded,
		},
		"kubernetes blue/green, promoted": {
			canary: func() *v1alpha1.Canary {
				return testobj.MakeCanary("podinfo", "apps").Analysis(v1alpha1.CanaryAnalysis{Interval: interval, Iterations: 2}).Obj()
			},
			drive: initThen(func(w *faultWorld) {
				w.setImage("podinfo", newImage)
				w.runUntil("succeeded", isPhase(v1alpha1.PhaseSucceeded))
			}),
			primaryImage: newImage, phase: v1alpha1.PhaseSucceeded,
		},
		"aborted, rolled back": {
			canary: gateway,
			drive: initThen(func(w *faultWorld) {
				w.setImage("podinfo", newImage)
				w.runUntil("at weight 25", atCanaryWeight(25))
				w.annotate(v1alpha1.AbortRequestAnnotation, "now")
				// The canary is scaled down once the data plane applied
				// the routes back, a reconcile after Failed.
				w.runUntil("failed, the canary scaled down", func(c *v1alpha1.Canary) bool {
					return c.Status.Phase == v1alpha1.PhaseFailed && *w.deployment("podinfo").Spec.Replicas == 0
				})
			}),
			primaryImage: goodImage, phase: v1alpha1.PhaseFailed,
		},
		"primary fails in promotion, restored (RestorePrimary)": {
			canary: func() *v1alpha1.Canary {
				c := gateway()
				c.Spec.Promotion = &v1alpha1.PromotionPolicy{FailurePolicy: v1alpha1.RestorePrimaryPolicy}
				return c
			},
			drive: initThen(func(w *faultWorld) {
				w.setImage("podinfo", brokenImage)
				w.runUntil("failed", isPhase(v1alpha1.PhaseFailed))
			}),
			primaryImage: goodImage, phase: v1alpha1.PhaseFailed,
		},
		"primary fails in promotion, halted, reverted in Git": {
			canary: gateway,
			drive: initThen(func(w *faultWorld) {
				w.setImage("podinfo", brokenImage)
				w.runUntil("halted", isPhase(v1alpha1.PhaseHalted))
				w.setImage("podinfo", goodImage)
				w.runUntil("succeeded", isPhase(v1alpha1.PhaseSucceeded))
			}),
			primaryImage: goodImage, phase: v1alpha1.PhaseSucceeded,
		},
	}
	for name, sc := range scenarios {
		t.Run(name, func(t *testing.T) {
			run := func(failAt int) *faultWorld {
				c := sc.canary()
				c.Finalizers = []string{v1alpha1.CanaryFinalizer}
				w := newFaultWorld(t, failAt, c, &testobj.MakeDeployment("podinfo", "apps").Replicas(2).Image(goodImage).Deployment)
				w.brokenAsPrimary = brokenImage
				sc.drive(w)
				return w
			}
			clean := run(0)
			total := len(clean.writes)
			if total < 10 {
				t.Fatalf("the clean run made %d writes: %v", total, clean.writes)
			}
			for k := 1; k <= total; k++ {
				w := run(k)
				c := w.canary()
				target, primary := w.deployment("podinfo"), w.deployment("podinfo-primary")
				failed := w.writes[k-1]
				promoted := c.Status.LastPromotedSpec
				switch {
				case c.Status.Phase != sc.phase:
					t.Errorf("fail at %q: ended %s, want %s", failed, c.Status.Phase, sc.phase)
				case primary.Spec.Template.Spec.Containers[0].Image != sc.primaryImage:
					t.Errorf("fail at %q: the primary runs %s, want %s", failed, primary.Spec.Template.Spec.Containers[0].Image, sc.primaryImage)
				case primary.Spec.Template.Annotations[workload.SpecHashAnnotation] != promoted:
					t.Errorf("fail at %q: the primary runs %s, the status says %s was promoted", failed, primary.Spec.Template.Annotations[workload.SpecHashAnnotation], promoted)
				case sc.phase == v1alpha1.PhaseSucceeded && promoted != workload.SpecHash(&target.Spec.Template, nil):
					t.Errorf("fail at %q: the target's revision was dropped: promoted %s", failed, promoted)
				case *target.Spec.Replicas != 0:
					t.Errorf("fail at %q: the canary keeps %d replicas", failed, *target.Spec.Replicas)
				case c.Status.CanaryWeight != 0:
					t.Errorf("fail at %q: canary weight %d at the end", failed, c.Status.CanaryWeight)
				}
			}
			t.Logf("a failure injected at each of the %d writes, in turn: each run ended %s (%v)", total, sc.phase, client.ObjectKeyFromObject(clean.canary()))
		})
	}
}
