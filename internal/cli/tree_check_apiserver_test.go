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

package cli

import (
	"context"
	"regexp"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// testTreeAgainstAPIServer creates a Canary and the objects the agent
// would generate, with their owner references, and objects of the same
// names that the Canary does not control.
func testTreeAgainstAPIServer(ctx context.Context, t *testing.T, kube client.Client, run func(...string) commandRun) {
	shop := makeCanary("apps", "shop").obj()
	mustCreate(t, kube, shop)
	updateCanaryStatus(t, kube, client.ObjectKeyFromObject(shop), func(c *v1alpha1.Canary) {
		c.Status.ObservedGeneration = c.Generation
		c.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Succeeded",
			Message: "promotion completed", LastTransitionTime: metav1.Now()}}
	})
	target, primary := treeDeployment("shop", true), ownedBy(treeDeployment("shop-primary", true), shop)
	for _, d := range []*appsv1.Deployment{target, primary} {
		ready := d.Status
		d.Status = appsv1.DeploymentStatus{}
		mustCreate(t, kube, d)
		d.Status = ready
		d.Status.ObservedGeneration = d.Generation
		if err := kube.Status().Update(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"shop", "shop-primary", "shop-canary"} {
		mustCreate(t, kube, ownedBy(treeService(name), shop))
	}
	mustCreate(t, kube, ownedBy(&gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "shop"},
		Spec: gatewayv1.HTTPRouteSpec{CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{
			{Name: "public", Namespace: ptr.To[gatewayv1.Namespace]("gateways")}}}}}, shop))
	mustCreate(t, kube, ownedBy(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "shop-token-primary"}}, shop))
	// Generated names, not generated for shop: one without an owner, one
	// the Canary owns but does not control.
	mustCreate(t, kube, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "shop-config-primary"}})
	notController := treeService("shop-mirror")
	notController.OwnerReferences = []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: v1alpha1.CanaryKind,
		Name: shop.Name, UID: shop.UID}}
	mustCreate(t, kube, notController)

	got := run("tree", "canary", "shop")
	if got.err != nil {
		t.Fatalf("%v\n%s", got.err, got.stderr)
	}
	// An HTTPRoute no Gateway accepted yet is InProgress, saying which.
	want := `Canary/apps/shop (Current)
├── Deployment/apps/shop (target, Current)
├── Deployment/apps/shop-primary (Current)
├── Service/apps/shop (Current)
├── Service/apps/shop-canary (Current)
├── Service/apps/shop-primary (Current)
├── HTTPRoute/apps/shop (InProgress: gateway gateways/public: waiting for the gateway to report status for generation 1)
└── Secret/apps/shop-token-primary (Current)
`
	if got.stdout != want {
		t.Errorf("got:\n%s\nwant:\n%s", got.stdout, want)
	}
}

// testCheckAgainstAPIServer runs serin check with serin's CRDs and the
// Gateway API's installed, without Flux: before the agent is deployed
// (a failed check, exit status 1) and once it is ready.
func testCheckAgainstAPIServer(ctx context.Context, t *testing.T, kube client.Client, run func(...string) commandRun) {
	kubernetesVersion := regexp.MustCompile(`Kubernetes \S+ `)
	got := run("check", "--pre")
	if got.err != nil || got.stdout != "" {
		t.Errorf("--pre: %v, %q", got.err, got.stdout)
	}
	assertGolden(t, "check/pre.txt", kubernetesVersion.ReplaceAllString(got.stderr, "Kubernetes X.Y.Z "))

	got = run("check")
	if ExitCode(got.err) != ExitFailed || errorText(got.err) != "1 check failed" {
		t.Errorf("without the agent: exit %d, %v", ExitCode(got.err), got.err)
	}
	assertGolden(t, "check/no-agent.txt", kubernetesVersion.ReplaceAllString(got.stderr, "Kubernetes X.Y.Z "))

	agent := treeDeployment("serin-agent", true)
	agent.Namespace = "serin-system"
	agent.Labels = map[string]string{"app.kubernetes.io/name": "serin-agent", "app.kubernetes.io/component": "agent"}
	agent.Spec.Template.Spec.Containers = []corev1.Container{{Name: "agent", Image: "ghcr.io/serin-dev/serin:v0.3.0"}}
	ready := agent.Status
	agent.Status = appsv1.DeploymentStatus{}
	mustCreate(t, kube, agent)
	got = run("check")
	if ExitCode(got.err) != ExitFailed || !strings.Contains(got.stderr, "✗ serin-agent: deployment not ready") {
		t.Errorf("an agent not ready: exit %d, %v\n%s", ExitCode(got.err), got.err, got.stderr)
	}
	agent.Status = ready
	agent.Status.ObservedGeneration = agent.Generation
	if err := kube.Status().Update(ctx, agent); err != nil {
		t.Fatal(err)
	}
	got = run("check")
	if got.err != nil {
		t.Errorf("a ready agent: %v", got.err)
	}
	assertGolden(t, "check/ready.txt", kubernetesVersion.ReplaceAllString(got.stderr, "Kubernetes X.Y.Z "))
}
