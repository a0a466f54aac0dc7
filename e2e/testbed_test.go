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

package e2e

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/internal/testing/testbed"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// A Deployment rolls out through the real deployment and replicaset
// controllers, scheduler and kwok.
func TestTestbed_DeploymentBecomesAvailable(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)

	d := testobj.MakeDeployment("web", ns).Replicas(2).Obj()
	g.Expect(k8s.Create(ctx, d)).To(Succeed())

	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(d), d)).To(Succeed())
		g.Expect(d.Status.AvailableReplicas).To(Equal(int32(2)))
		g.Expect(condition(d, appsv1.DeploymentAvailable)).To(Equal(corev1.ConditionTrue))
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())

	var pods corev1.PodList
	g.Expect(k8s.List(ctx, &pods, client.InNamespace(ns))).To(Succeed())
	g.Expect(pods.Items).To(HaveLen(2))
	for _, p := range pods.Items {
		g.Expect(p.Spec.NodeName).To(Equal(testbed.NodeName), "scheduled by kube-scheduler onto the kwok node")
		g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning))
	}
}

// Pods that never become Ready make the Deployment controller report
// ProgressDeadlineExceeded, as it does for a broken image in a real cluster.
func TestTestbed_NeverReadyExceedsProgressDeadline(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)

	d := testobj.MakeDeployment("broken", ns).Replicas(2).ProgressDeadlineSeconds(5).
		PodLabel(testbed.NeverReadyLabel, "true").Obj()
	g.Expect(k8s.Create(ctx, d)).To(Succeed())

	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(d), d)).To(Succeed())
		var progressing *appsv1.DeploymentCondition
		for i := range d.Status.Conditions {
			if d.Status.Conditions[i].Type == appsv1.DeploymentProgressing {
				progressing = &d.Status.Conditions[i]
			}
		}
		g.Expect(progressing).NotTo(BeNil())
		g.Expect(progressing.Status).To(Equal(corev1.ConditionFalse))
		g.Expect(progressing.Reason).To(Equal("ProgressDeadlineExceeded"))
	}, 60*time.Second, 200*time.Millisecond).Should(Succeed())
	g.Expect(d.Status.AvailableReplicas).To(BeZero())

	var pods corev1.PodList
	g.Expect(k8s.List(ctx, &pods, client.InNamespace(ns))).To(Succeed())
	g.Expect(pods.Items).NotTo(BeEmpty())
	for _, p := range pods.Items {
		g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning), "the pods run but are not ready")
	}
}

func condition(d *appsv1.Deployment, t appsv1.DeploymentConditionType) corev1.ConditionStatus {
	for _, c := range d.Status.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return corev1.ConditionUnknown
}
