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
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	"helm.sh/helm/v4/pkg/action"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/kube"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testbed"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// The full testbed (API server, controller-manager, scheduler, kwok) with
// no CRD installed: the chart brings them. Started by the first test that
// needs it, stopped by TestMain.
var (
	testbedOnce sync.Once
	env         *testbed.Testbed
	k8s         client.Client
	testbedErr  error
)

func TestMain(m *testing.M) {
	// controller-runtime's client logs through its global logger.
	ctrllog.SetLogger(logr.Discard())
	code := m.Run()
	if env != nil {
		// Always stopped (envtest's etcd and API server outlive the test
		// binary otherwise); the logs are kept when a test failed.
		_ = env.Stop()
		if code != 0 {
			fmt.Println("charttest: testbed logs kept in", env.Dir)
		} else {
			_ = os.RemoveAll(env.Dir)
		}
	}
	os.Exit(code)
}

// startTestbed returns the package's testbed, or skips the test when the
// testbed cannot run here.
func startTestbed(t *testing.T) (*testbed.Testbed, client.Client) {
	t.Helper()
	if testing.Short() {
		t.Skip("installs the chart on the local testbed (skipped in -short mode)")
	}
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("no testbed binaries: KUBEBUILDER_ASSETS=$(hack/testbed/assets.sh) runs this test (make test sets it)")
	}
	testbedOnce.Do(func() {
		env, testbedErr = testbed.Start(context.Background(), testbed.Options{Full: true})
		if testbedErr != nil {
			return
		}
		scheme := runtime.NewScheme()
		_ = clientgoscheme.AddToScheme(scheme)
		_ = apiextensionsv1.AddToScheme(scheme)
		_ = v1alpha1.AddToScheme(scheme)
		k8s, testbedErr = client.New(env.Config, client.Options{Scheme: scheme})
	})
	if testbedErr != nil {
		t.Fatalf("testbed: %v", testbedErr)
	}
	return env, k8s
}

// helmConfig is a Helm action configuration for the testbed's admin in
// namespace, logging to the test.
func helmConfig(t *testing.T, tb *testbed.Testbed, namespace string) *action.Configuration {
	t.Helper()
	getter := genericclioptions.NewConfigFlags(false)
	getter.KubeConfig = &tb.Kubeconfig
	getter.Namespace = &namespace
	cfg := action.NewConfiguration(action.ConfigurationSetLogger(slog.NewTextHandler(testWriter{t}, nil)))
	if err := cfg.Init(getter, namespace, "secret"); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// testWriter sends Helm's log to the test's.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// installChart installs the chart as `helm install --wait` does, into a
// namespace that enforces the restricted Pod Security Standard.
func installChart(t *testing.T, g Gomega, tb *testbed.Testbed, cluster client.Client, release, namespace, values string) *action.Configuration {
	t.Helper()
	return installChartOf(t, g, tb, cluster, loadChart(t), release, namespace, values)
}

// installChartOf installs ch as installChart installs the tree's chart.
func installChartOf(t *testing.T, g Gomega, tb *testbed.Testbed, cluster client.Client, ch *chart.Chart, release, namespace, values string) *action.Configuration {
	t.Helper()
	ctx := context.Background()
	g.Expect(cluster.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace, Labels: map[string]string{
		"pod-security.kubernetes.io/enforce": "restricted",
	}}})).To(Succeed())
	cfg := helmConfig(t, tb, namespace)
	install := action.NewInstall(cfg)
	install.ReleaseName = release
	install.Namespace = namespace
	install.WaitStrategy = kube.StatusWatcherStrategy
	install.Timeout = 2 * time.Minute
	start := time.Now()
	_, err := install.RunWithContext(ctx, ch, parseValues(t, values))
	g.Expect(err).NotTo(HaveOccurred())
	t.Logf("helm install %s in %s: ready in %s", release, namespace, time.Since(start).Round(time.Millisecond))
	return cfg
}

// serviceAccountAgent runs the agent built from this tree as a process,
// with the arguments of the chart's Deployment, authenticated as the
// chart's ServiceAccount (its user name and groups, which RBAC bindings to
// a ServiceAccount match): it can do only what the chart's RBAC grants.
func serviceAccountAgent(t *testing.T, g Gomega, tb *testbed.Testbed, cluster client.Client, namespace, deployment string) *testbed.Agent {
	t.Helper()
	ctx := context.Background()
	d := &appsv1.Deployment{}
	g.Expect(cluster.Get(ctx, client.ObjectKey{Namespace: namespace, Name: deployment}, d)).To(Succeed())
	pod := d.Spec.Template.Spec
	user := "system:serviceaccount:" + namespace + ":" + pod.ServiceAccountName
	agent, err := tb.StartAgentWith(ctx, repoRoot, testbed.AgentOptions{
		Name:   deployment + "-" + namespace,
		User:   user,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace},
		// The Deployment's downward API: the Lease's (and, without
		// --watch-all-namespaces, the watched) namespace.
		Env:   []string{"RUNTIME_NAMESPACE=" + namespace},
		Flags: append(pod.Containers[0].Args, "--log-encoding=console"),
	})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() {
		_ = agent.Kill()
		// Nothing the agent asked for was refused (its informers and the
		// leader election included).
		refused, err := agent.Refusals(user)
		if err != nil {
			t.Error(err)
		}
		for _, line := range refused {
			t.Errorf("the API server refused the agent: %s", line)
		}
		if log, _ := agent.Log(); !strings.Contains(log, "starting serin-agent") {
			t.Errorf("the agent did not log its start and version:\n%s", log)
		}
	})
	return agent
}

// canaryInitializes creates a Deployment and its blue/green Canary in
// namespace and waits until the agent has initialized it: the primary
// created and ready, the Services written, Ready=True.
func canaryInitializes(g Gomega, cluster client.Client, namespace string) {
	canaryInitializesWith(g, cluster, namespace, nil)
}

// canaryInitializesWith is canaryInitializes with the Canary changed by
// edit (when not nil) before it is created.
func canaryInitializesWith(g Gomega, cluster client.Client, namespace string, edit func(*v1alpha1.Canary)) {
	ctx := context.Background()
	app := testobj.MakeDeployment("podinfo", namespace).Obj()
	// The app may run where the restricted Pod Security Standard is
	// enforced (the release namespace).
	app.Spec.Template.Spec.SecurityContext = &corev1.PodSecurityContext{
		RunAsNonRoot:   ptr.To(true),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
	app.Spec.Template.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
	g.Expect(cluster.Create(ctx, app)).To(Succeed())
	c := testobj.MakeCanary("podinfo", namespace).ProgressDeadlineSeconds(30).Obj()
	if edit != nil {
		edit(c)
	}
	g.Expect(cluster.Create(ctx, c)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(cluster.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
		g.Expect(c.Status.Phase).To(Equal(v1alpha1.PhaseInitialized))
		g.Expect(conditions.IsTrue(c, meta.ReadyCondition)).To(BeTrue())
	}, time.Minute, 200*time.Millisecond).Should(Succeed())
	primary := &appsv1.Deployment{}
	g.Expect(cluster.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "podinfo-primary"}, primary)).To(Succeed())
	g.Expect(primary.Status.AvailableReplicas).To(Equal(int32(1)))
}

// The chart installs on a cluster that has never seen serin: Helm creates
// the CRDs (templates of the release, kept on uninstall), then the RBAC, the ServiceAccount and the agent's
// Deployment, whose pod the restricted Pod Security Standard admits and
// which becomes Available. The agent, run with the Deployment's arguments
// as the chart's ServiceAccount, initializes a Canary with nothing but the
// chart's ClusterRole and leader election Role. helm uninstall removes the
// release's objects and keeps the CRDs, and so the Canaries.
func TestInstall_ClusterWide(t *testing.T) {
	tb, cluster := startTestbed(t)
	g := NewWithT(t)
	ctx := context.Background()
	const namespace, release = "serin-system", "serin"

	for _, crd := range []string{"canaries.serin.dev", "canarygroups.serin.dev", "metrictemplates.serin.dev"} {
		err := cluster.Get(ctx, client.ObjectKey{Name: crd}, &apiextensionsv1.CustomResourceDefinition{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%s exists before the install: %v", crd, err)
	}
	// No notification-controller on this testbed.
	cfg := installChart(t, g, tb, cluster, release, namespace, `eventsAddr: ""`)

	for _, crd := range []string{"canaries.serin.dev", "canarygroups.serin.dev", "metrictemplates.serin.dev"} {
		got := &apiextensionsv1.CustomResourceDefinition{}
		g.Expect(cluster.Get(ctx, client.ObjectKey{Name: crd}, got)).To(Succeed())
		g.Expect(got.Labels).To(HaveKeyWithValue("app.kubernetes.io/managed-by", "Helm"), "the CRDs are the release's templates")
		g.Expect(got.Annotations).To(HaveKeyWithValue("helm.sh/resource-policy", "keep"))
	}
	d := &appsv1.Deployment{}
	g.Expect(cluster.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "serin-agent"}, d)).To(Succeed())
	g.Expect(d.Status.AvailableReplicas).To(Equal(int32(1)), "helm install --wait returned before the agent was Available")
	g.Expect(conditionStatus(d, appsv1.DeploymentAvailable)).To(Equal(corev1.ConditionTrue))
	g.Expect(d.Spec.Template.Spec.ServiceAccountName).To(Equal("serin-agent"))
	g.Expect(cluster.Get(ctx, client.ObjectKey{Name: "serin-manager"}, &rbacv1.ClusterRole{})).To(Succeed())

	serviceAccountAgent(t, g, tb, cluster, namespace, "serin-agent")
	apps := "apps"
	g.Expect(cluster.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: apps}})).To(Succeed())
	canaryInitializes(g, cluster, apps)
	// The agent leads through a Lease the chart's leader election Role allows.
	leases := &coordinationv1.LeaseList{}
	g.Expect(cluster.List(ctx, leases, client.InNamespace(namespace))).To(Succeed())
	g.Expect(leases.Items).To(HaveLen(1), "no leader election Lease in %s", namespace)
	g.Expect(leases.Items[0].Spec.HolderIdentity).NotTo(BeNil())

	uninstall := action.NewUninstall(cfg)
	uninstall.WaitStrategy = kube.StatusWatcherStrategy
	uninstall.Timeout = time.Minute
	_, err := uninstall.Run(release)
	g.Expect(err).NotTo(HaveOccurred())
	for _, obj := range []client.Object{
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "serin-agent"}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "serin-agent"}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "serin-agent"}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "serin-manager"}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "serin-manager"}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "serin-leader-election"}},
	} {
		g.Eventually(func() bool {
			return apierrors.IsNotFound(cluster.Get(ctx, client.ObjectKeyFromObject(obj), obj))
		}, 30*time.Second, 100*time.Millisecond).Should(BeTrue(), "%T %s left by helm uninstall", obj, obj.GetName())
	}
	for _, crd := range []string{"canaries.serin.dev", "canarygroups.serin.dev", "metrictemplates.serin.dev"} {
		g.Expect(cluster.Get(ctx, client.ObjectKey{Name: crd}, &apiextensionsv1.CustomResourceDefinition{})).To(Succeed(),
			"helm uninstall deleted %s", crd)
	}
	g.Expect(cluster.Get(ctx, client.ObjectKey{Namespace: apps, Name: "podinfo"}, &v1alpha1.Canary{})).To(Succeed(),
		"the Canary is gone after helm uninstall")
}

// With watchAllNamespaces false the chart grants Roles only (in the
// release namespace and those listed), and the agent, as the chart's
// ServiceAccount, initializes a Canary of its namespace with them. Another
// release installed the CRDs already (TestInstall_ClusterWide, whose
// uninstall kept them): this one does not (crds.install: false), and
// brings its own ClusterRoles for people and tenants only.
func TestInstall_OneNamespace(t *testing.T) {
	tb, cluster := startTestbed(t)
	g := NewWithT(t)
	ctx := context.Background()
	const namespace, release = "team-a", "serin-team-a"
	// Where the team's Flux objects live: the agent gets a Role there too.
	g.Expect(cluster.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a-flux"}})).To(Succeed())

	installChart(t, g, tb, cluster, release, namespace, `
eventsAddr: ""
watchAllNamespaces: false
crds: {install: false}
rbac: {namespaces: [team-a-flux]}`)
	roles := &rbacv1.RoleList{}
	g.Expect(cluster.List(ctx, roles, client.MatchingLabels{"app.kubernetes.io/instance": release})).To(Succeed())
	var names []string
	for _, r := range roles.Items {
		names = append(names, r.Namespace+"/"+r.Name)
	}
	g.Expect(names).To(ConsistOf("team-a/serin-team-a-manager", "team-a/serin-team-a-leader-election", "team-a-flux/serin-team-a-manager"))
	clusterRoles := &rbacv1.ClusterRoleList{}
	g.Expect(cluster.List(ctx, clusterRoles, client.MatchingLabels{"app.kubernetes.io/instance": release})).To(Succeed())
	names = nil
	for _, r := range clusterRoles.Items {
		names = append(names, r.Name)
	}
	g.Expect(names).To(ConsistOf("serin-team-a-view", "serin-team-a-edit", "serin-team-a-tenant"))

	serviceAccountAgent(t, g, tb, cluster, namespace, "serin-team-a-agent")
	canaryInitializes(g, cluster, namespace)
}

func conditionStatus(d *appsv1.Deployment, t appsv1.DeploymentConditionType) corev1.ConditionStatus {
	for _, c := range d.Status.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return corev1.ConditionUnknown
}
