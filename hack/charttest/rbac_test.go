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

package charttest

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/agentrequest"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// A team bound in its namespace to Kubernetes' built-in edit ClusterRole
// can run serin promote (a merge patch of the Canary's annotations, what
// the CLI sends) and write Canaries and MetricTemplates, but not their
// status; one bound to view reads Canaries and cannot patch them. The
// rules come from the chart's serin-view and serin-edit through the real
// mechanism: kube-controller-manager's clusterrole-aggregation controller,
// run against the test's API server, copies them into view, edit and admin
// (the API server alone only creates those roles, with their
// aggregationRule).
func TestRBAC_BuiltInRolesGetSerinsRules(t *testing.T) {
	tb, cluster := startAPIServer(t)
	if !hasControllerManager() {
		t.Skip("needs kube-controller-manager in KUBEBUILDER_ASSETS (hack/testbed/assets.sh) for the clusterrole-aggregation controller")
	}
	g := NewWithT(t)
	ctx := context.Background()
	g.Expect(tb.StartControllers("clusterrole-aggregation")).To(Succeed())
	helmInstall(t, g, tb, cluster, loadChart(t), testRelease, testNamespace, `eventsAddr: ""`)

	g.Eventually(func(g Gomega) {
		for role, verb := range map[string]string{"view": "watch", "edit": "patch", "admin": "deletecollection"} {
			r := &rbacv1.ClusterRole{}
			g.Expect(cluster.Get(ctx, client.ObjectKey{Name: role}, r)).To(Succeed())
			g.Expect(grants(r.Rules, "canaries", verb)).To(BeTrue(), "%s has no %s on canaries yet", role, verb)
		}
	}, time.Minute, 100*time.Millisecond).Should(Succeed())
	view := &rbacv1.ClusterRole{}
	g.Expect(cluster.Get(ctx, client.ObjectKey{Name: "view"}, view)).To(Succeed())
	g.Expect(grants(view.Rules, "canaries", "patch")).To(BeFalse(), "view may patch canaries")

	const team = "team-a"
	g.Expect(cluster.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: team}})).To(Succeed())
	for user, role := range map[string]string{"alice": "edit", "bob": "view"} {
		g.Expect(cluster.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: team, Name: user + "-" + role},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
		})).To(Succeed())
	}
	alice, bob := as(t, tb, "alice"), as(t, tb, "bob")
	promote, ok := agentrequest.ByVerb("promote")
	g.Expect(ok).To(BeTrue())

	// alice (edit) writes the team's Canary and MetricTemplate, and
	// promotes as serin promote does.
	canary := testobj.MakeCanary("podinfo", team).Obj()
	g.Expect(alice.Create(ctx, canary)).To(Succeed())
	g.Expect(alice.Create(ctx, &v1alpha1.MetricTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: team, Name: "errors"},
		Spec: v1alpha1.MetricTemplateSpec{
			Provider: v1alpha1.MetricProvider{Type: "prometheus", Address: "http://prometheus.monitoring:9090"},
			Query:    "sum(rate(http_requests_total[1m]))",
		},
	})).To(Succeed())
	value, err := promote.Send(ctx, alice, canary, time.Now())
	g.Expect(err).NotTo(HaveOccurred(), "edit cannot send serin promote's request")
	got := &v1alpha1.Canary{}
	g.Expect(bob.Get(ctx, client.ObjectKeyFromObject(canary), got)).To(Succeed(), "view cannot read the Canary")
	g.Expect(got.Annotations).To(HaveKeyWithValue(promote.Annotation, value))
	g.Expect(bob.List(ctx, &v1alpha1.CanaryList{}, client.InNamespace(team))).To(Succeed())
	g.Expect(bob.List(ctx, &v1alpha1.MetricTemplateList{}, client.InNamespace(team))).To(Succeed())

	// The status is the agent's; view writes nothing; neither reaches
	// another namespace.
	status := client.RawPatch(types.MergePatchType, []byte(`{"status":{"phase":"Succeeded"}}`))
	g.Expect(apierrors.IsForbidden(alice.Status().Patch(ctx, got, status))).To(BeTrue(), "edit may write a Canary's status")
	_, err = promote.Send(ctx, bob, got, time.Now())
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "view may patch a Canary: %v", err)
	g.Expect(apierrors.IsForbidden(bob.Delete(ctx, got))).To(BeTrue(), "view may delete a Canary")
	g.Expect(apierrors.IsForbidden(alice.List(ctx, &v1alpha1.CanaryList{}, client.InNamespace(testNamespace)))).To(BeTrue(),
		"a RoleBinding in %s grants %s", team, testNamespace)
	g.Expect(alice.Delete(ctx, got)).To(Succeed(), "edit cannot delete the team's Canary")

	// The tenant role is installed too.
	g.Expect(cluster.Get(ctx, client.ObjectKey{Name: "serin-tenant"}, &rbacv1.ClusterRole{})).To(Succeed())
}

// grants tells whether rules allow verb on serin.dev's resource.
func grants(rules []rbacv1.PolicyRule, resource, verb string) bool {
	for _, r := range rules {
		if contains(r.APIGroups, v1alpha1.GroupVersion.Group) && contains(r.Resources, resource) && contains(r.Verbs, verb) {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s || x == "*" {
			return true
		}
	}
	return false
}
