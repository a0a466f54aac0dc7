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
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testbed"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// tenancyShard labels the Canaries of the tenancy test's own agent.
const tenancyShard = "tenancy"

// tenancyAgent starts an agent as a platform team runs one for many
// tenants: authenticated as a user that holds nothing but the generated
// ClusterRole (config/rbac/role.yaml), refusing cross-namespace references,
// and impersonating the service account serin-tenant in each Canary's
// namespace unless a Canary names its own.
func tenancyAgent(t *testing.T, g Gomega) {
	t.Helper()
	ctx := context.Background()
	const user = "serin-agent-tenancy"
	role := readClusterRole(t, g, filepath.Join("..", "config", "rbac", "role.yaml"))
	role.Name = "serin-manager-e2e-tenancy"
	g.Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, role))).To(Succeed())
	g.Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}))).To(Succeed())
	tenant := readClusterRole(t, g, filepath.Join("..", "config", "tenancy", "tenant_role.yaml"))
	g.Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, tenant))).To(Succeed())

	a, err := env.StartAgentWith(ctx, "..", testbed.AgentOptions{
		Name: "serin-agent-tenancy",
		User: user,
		Flags: []string{"--watch-label-selector=" + shardLabel + "=" + tenancyShard, "--log-level=info",
			"--no-cross-namespace-refs", "--default-service-account=serin-tenant", "--gitops-revert=false"},
	})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() {
		_ = a.Kill()
		// The generated ClusterRole is all the agent needed: the API
		// server refused it nothing (its informers included).
		refused, err := a.Refusals(user)
		if err != nil {
			t.Error(err)
		}
		for _, line := range refused {
			t.Errorf("the API server refused the agent: %s", line)
		}
	})
}

func readClusterRole(t *testing.T, g Gomega, path string) *rbacv1.ClusterRole {
	t.Helper()
	b, err := os.ReadFile(path)
	g.Expect(err).NotTo(HaveOccurred())
	role := &rbacv1.ClusterRole{}
	g.Expect(yaml.Unmarshal(b, role)).To(Succeed())
	return role
}

// tenantNamespace is a tenant's namespace with the service account serin
// impersonates there, bound to the ClusterRole serin-tenant.
func tenantNamespace(t *testing.T, g Gomega) string {
	t.Helper()
	ns := newNamespace(t)
	ctx := context.Background()
	g.Expect(k8s.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "serin-tenant", Namespace: ns}})).To(Succeed())
	bindTenantRole(g, ns, "serin-tenant")
	return ns
}

func bindTenantRole(g Gomega, ns, serviceAccount string) {
	g.Expect(k8s.Create(context.Background(), &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: serviceAccount + "-serin-tenant", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "serin-tenant"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: serviceAccount, Namespace: ns}},
	})).To(Succeed())
}

// tenantCanary creates a Deployment and its blue/green Canary for the
// tenancy agent.
func tenantCanary(g Gomega, ns, name string, mutate func(*v1alpha1.Canary), labels map[string]string) *v1alpha1.Canary {
	ctx := context.Background()
	d := testobj.MakeDeployment(name, ns).Obj()
	for k, v := range labels {
		d.Labels[k] = v
	}
	g.Expect(k8s.Create(ctx, d)).To(Succeed())
	c := testobj.MakeCanary(name, ns).ProgressDeadlineSeconds(30).Analysis(v1alpha1.CanaryAnalysis{
		Interval:   &metav1.Duration{Duration: time.Second},
		Threshold:  1,
		Iterations: 1,
	}).Obj()
	c.Labels = map[string]string{shardLabel: tenancyShard}
	if mutate != nil {
		mutate(c)
	}
	g.Expect(k8s.Create(ctx, c)).To(Succeed())
	return c
}

// waitForReason waits until the Canary's Ready condition has reason and a
// message containing each of parts, and returns the message.
func waitForReason(g Gomega, c *v1alpha1.Canary, reason string, stalled bool, parts ...string) string {
	var msg string
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(context.Background(), client.ObjectKeyFromObject(c), c)).To(Succeed())
		g.Expect(conditions.GetReason(c, meta.ReadyCondition)).To(Equal(reason))
		g.Expect(conditions.IsStalled(c)).To(Equal(stalled))
		msg = conditions.GetMessage(c, meta.ReadyCondition)
		for _, p := range parts {
			g.Expect(msg).To(ContainSubstring(p))
		}
	}, 60*time.Second, 200*time.Millisecond).Should(Succeed())
	return msg
}

// One agent, two tenants. Every borrow of what belongs to another
// namespace, or to the platform, is refused with a condition that says
// what to fix; what a tenant owns works, with the agent holding only the
// generated ClusterRole and writing as the tenant's service account.
func TestTenancy_BorrowsAreRefused(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	tenancyAgent(t, g)
	teamA, teamB := tenantNamespace(t, g), tenantNamespace(t, g)

	// team-b's Provider (its Slack token) and MetricTemplate (its
	// Prometheus and credentials).
	var posted atomic.Int32
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { posted.Add(1) }))
	t.Cleanup(sink.Close)
	g.Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "slack", Namespace: teamB},
		StringData: map[string]string{"address": sink.URL + "/team-b", "token": "team-b-token"}})).To(Succeed())
	provider := fluxObject("notification.toolkit.fluxcd.io/v1beta3", "Provider", teamB, "slack",
		map[string]any{"type": "generic", "secretRef": map[string]any{"name": "slack"}})
	g.Expect(k8s.Create(ctx, provider)).To(Succeed())
	g.Expect(k8s.Create(ctx, &v1alpha1.MetricTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "error-rate", Namespace: teamB},
		Spec: v1alpha1.MetricTemplateSpec{
			Provider: v1alpha1.MetricProvider{Address: prom.URL},
			Query:    "vector(0)",
		},
	})).To(Succeed())

	t.Run("a Provider of another namespace", func(t *testing.T) {
		g := NewWithT(t)
		c := tenantCanary(g, teamA, "alerts", func(c *v1alpha1.Canary) {
			c.Spec.Alerts = []v1alpha1.CanaryAlert{{ProviderRef: meta.NamespacedObjectReference{Name: "slack", Namespace: teamB}}}
		}, nil)
		msg := waitForReason(g, c, v1alpha1.AccessDeniedReason, true,
			"spec.alerts[0].providerRef refers to Provider "+teamB+"/slack in another namespace", "--no-cross-namespace-refs")
		t.Logf("Ready=False AccessDenied: %s", msg)
		g.Expect(posted.Load()).To(BeZero(), "team-b's Provider was used")
	})

	t.Run("a MetricTemplate of another namespace", func(t *testing.T) {
		g := NewWithT(t)
		c := tenantCanary(g, teamA, "metrics", func(c *v1alpha1.Canary) {
			c.Spec.Analysis.Metrics = []v1alpha1.CanaryMetric{{
				Name:           "error-rate",
				TemplateRef:    &v1alpha1.TemplateReference{Name: "error-rate", Namespace: teamB},
				ThresholdRange: &v1alpha1.ThresholdRange{Max: ptrFloat(1)},
			}}
		}, nil)
		waitForReason(g, c, v1alpha1.AccessDeniedReason, true,
			"spec.analysis.metrics[0].templateRef refers to MetricTemplate "+teamB+"/error-rate in another namespace")
	})

	t.Run("the platform's Kustomization named by labels", func(t *testing.T) {
		g := NewWithT(t)
		installKustomizationCRD(t)
		// A Kustomization in team-a that applied another object: the
		// labels of team-a's Deployment claim it, its inventory does not.
		ks := fluxObject("kustomize.toolkit.fluxcd.io/v1", "Kustomization", teamA, "apps", map[string]any{
			"interval": "10m", "path": "./", "prune": true, "suspend": true,
			"sourceRef": map[string]any{"kind": "GitRepository", "name": "apps"},
		})
		g.Expect(k8s.Create(ctx, ks)).To(Succeed())
		// kustomize-controller, when running, writes the suspended
		// Kustomization too (its finalizer): retry on a conflict.
		g.Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(ks), ks)).To(Succeed())
			g.Expect(unstructured.SetNestedField(ks.Object, "main@sha1:1111111111111111111111111111111111111111", "status", "lastAppliedRevision")).To(Succeed())
			g.Expect(unstructured.SetNestedSlice(ks.Object, []any{map[string]any{"id": teamA + "_listed_apps_Deployment", "v": "v1"}},
				"status", "inventory", "entries")).To(Succeed())
			g.Expect(k8s.Status().Update(ctx, ks)).To(Succeed())
		}, 10*time.Second, 100*time.Millisecond).Should(Succeed())
		claims := func(ns string) map[string]string {
			return map[string]string{"kustomize.toolkit.fluxcd.io/name": "apps", "kustomize.toolkit.fluxcd.io/namespace": ns}
		}
		borrower := tenantCanary(g, teamA, "borrower", nil, claims(teamA))
		platform := tenantCanary(g, teamB, "platform", nil, claims(teamA))
		listed := tenantCanary(g, teamA, "listed", nil, claims(teamA))
		for _, c := range []*v1alpha1.Canary{borrower, platform, listed} {
			waitForPhase(g, c, v1alpha1.PhaseInitialized, 60*time.Second)
		}
		// Only the Deployment the inventory lists gets the Kustomization's
		// revision: the others are not attributed to it, so neither its
		// Git credentials, nor its Alerts and commit statuses, serve them.
		g.Expect(listed.Status.LastAttemptedRevision).To(Equal("main@sha1:1111111111111111111111111111111111111111"))
		g.Expect(borrower.Status.LastAttemptedRevision).To(BeEmpty())
		g.Expect(platform.Status.LastAttemptedRevision).To(BeEmpty())
	})

	t.Run("a service account without RBAC", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(k8s.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "deployer", Namespace: teamB}})).To(Succeed())
		c := tenantCanary(g, teamB, "impersonated", func(c *v1alpha1.Canary) { c.Spec.ServiceAccountName = "deployer" }, nil)
		msg := waitForReason(g, c, v1alpha1.AccessDeniedReason, false, "system:serviceaccount:"+teamB+":deployer")
		t.Logf("Ready=False AccessDenied: %s", msg)
		// serin wrote nothing as itself: no primary, no Service.
		g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: teamB, Name: "impersonated-primary"}, &corev1.Service{})).NotTo(Succeed())
		bindTenantRole(g, teamB, "deployer")
		waitForPhase(g, c, v1alpha1.PhaseInitialized, 90*time.Second)
	})

	t.Run("a Service serin did not create", func(t *testing.T) {
		g := NewWithT(t)
		// The tenant's own Service holds the name serin would generate:
		// serin neither relabels nor repoints it, unless asked to.
		theirs := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "adopt-canary", Namespace: teamA, Labels: map[string]string{"team": "a"}},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "something-else"},
				Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
		}
		g.Expect(k8s.Create(ctx, theirs)).To(Succeed())
		c := tenantCanary(g, teamA, "adopt", nil, nil)
		msg := waitForReason(g, c, v1alpha1.AdoptionRefusedReason, true, "Service adopt-canary exists and is not managed by this Canary", v1alpha1.AdoptAnnotation)
		t.Logf("Ready=False AdoptionRefused: %s", msg)
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(theirs), theirs)).To(Succeed())
		g.Expect(theirs.Spec.Selector).To(Equal(map[string]string{"app": "something-else"}))
		g.Expect(theirs.OwnerReferences).To(BeEmpty())

		patch := client.MergeFrom(theirs.DeepCopy())
		theirs.Annotations = map[string]string{v1alpha1.AdoptAnnotation: "true"}
		g.Expect(k8s.Patch(ctx, theirs, patch)).To(Succeed())
		// A change of the Canary brings the next reconcile, as for any stall.
		patch = client.MergeFrom(c.DeepCopy())
		c.Annotations = map[string]string{meta.ReconcileRequestAnnotation: time.Now().Format(time.RFC3339Nano)}
		g.Expect(k8s.Patch(ctx, c, patch)).To(Succeed())
		waitForPhase(g, c, v1alpha1.PhaseInitialized, 60*time.Second)
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(theirs), theirs)).To(Succeed())
		g.Expect(metav1.GetControllerOf(theirs)).NotTo(BeNil())
		g.Expect(metav1.GetControllerOf(theirs).Name).To(Equal("adopt"))
	})

	t.Run("what the tenant owns rolls out", func(t *testing.T) {
		g := NewWithT(t)
		c := tenantCanary(g, teamA, "owned", nil, nil)
		waitForPhase(g, c, v1alpha1.PhaseInitialized, 60*time.Second)
		d := testobj.MakeDeployment("owned", teamA).Obj()
		g.Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(d), d)).To(Succeed())
			d.Spec.Template.Annotations = map[string]string{"release": "2"}
			g.Expect(k8s.Update(ctx, d)).To(Succeed())
		}, 10*time.Second, 100*time.Millisecond).Should(Succeed())
		waitForPhase(g, c, v1alpha1.PhaseSucceeded, 90*time.Second)
	})
}
