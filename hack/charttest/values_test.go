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
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v4/pkg/chart/common"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// defaultArgs are the agent's flags with the chart's default values.
var defaultArgs = []string{
	"--watch-all-namespaces=true", "--log-level=info", "--log-encoding=json", "--enable-leader-election=true",
	"--gitops-clone-disk-budget=896Mi", "--events-addr=http://notification-controller.flux-system.svc.cluster.local./",
}

// agent returns the rendered Deployment and its agent container.
func agent(t *testing.T, r *rendered, name string) (*appsv1.Deployment, corev1.Container) {
	t.Helper()
	d := &appsv1.Deployment{}
	r.get(t, "Deployment", testNamespace, name, d)
	if len(d.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("the Deployment has %d containers, want the agent", len(d.Spec.Template.Spec.Containers))
	}
	return d, d.Spec.Template.Spec.Containers[0]
}

func diff(t *testing.T, what string, want, got any) {
	t.Helper()
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("%s differs (-want +got):\n%s", what, d)
	}
}

func envNames(c corev1.Container) []string {
	var names []string
	for _, e := range c.Env {
		names = append(names, e.Name)
	}
	return names
}

// valueCases render the chart with one value set each and check what the
// values change. Every value of values.yaml is set by at least one case
// (TestEveryValueIsRendered).
var valueCases = map[string]struct {
	values string
	// kubeVersion of the cluster; testKubeVersion when nil.
	kubeVersion *common.KubeVersion
	want        func(t *testing.T, r *rendered)
	wantErr     string
}{
	"defaults": {
		want: func(t *testing.T, r *rendered) {
			diff(t, "objects", []string{
				"ClusterRole /serin-edit", "ClusterRole /serin-manager", "ClusterRole /serin-tenant", "ClusterRole /serin-view",
				"ClusterRoleBinding /serin-manager",
				"CustomResourceDefinition /canaries.serin.dev", "CustomResourceDefinition /canarygroups.serin.dev",
				"CustomResourceDefinition /metrictemplates.serin.dev",
				"Deployment serin-system/serin-agent", "Role serin-system/serin-leader-election",
				"RoleBinding serin-system/serin-leader-election", "Service serin-system/serin-agent",
				"ServiceAccount serin-system/serin-agent",
			}, r.keys())
			d, c := agent(t, r, "serin-agent")
			diff(t, "image", "ghcr.io/serin-dev/serin:latest", c.Image)
			diff(t, "args", defaultArgs, c.Args)
			diff(t, "env", []string{"RUNTIME_NAMESPACE", "GOMEMLIMIT"}, envNames(c))
			diff(t, "replicas", ptr.To[int32](1), d.Spec.Replicas)
			diff(t, "service account", "serin-agent", d.Spec.Template.Spec.ServiceAccountName)
			if !strings.Contains(r.notes, "watching Canaries in every namespace") {
				t.Errorf("the notes do not say what is watched:\n%s", r.notes)
			}
		},
	},
	"image": {
		values: `
image:
  repository: registry.example/mirror/serin
  tag: v0.3.0
  pullPolicy: Always
  pullSecrets: [mirror-credentials, {name: other-credentials}]`,
		want: func(t *testing.T, r *rendered) {
			d, c := agent(t, r, "serin-agent")
			diff(t, "image", "registry.example/mirror/serin:v0.3.0", c.Image)
			diff(t, "pull policy", corev1.PullAlways, c.ImagePullPolicy)
			diff(t, "pull secrets", []corev1.LocalObjectReference{{Name: "mirror-credentials"}, {Name: "other-credentials"}},
				d.Spec.Template.Spec.ImagePullSecrets)
			diff(t, "version label", "v0.3.0", d.Labels["app.kubernetes.io/version"])
		},
	},
	"nameOverride": {
		values: `nameOverride: delivery`,
		want: func(t *testing.T, r *rendered) {
			d, _ := agent(t, r, "serin-delivery-agent")
			diff(t, "name label", "delivery", d.Spec.Template.Labels["app.kubernetes.io/name"])
			r.get(t, "ClusterRole", "", "serin-delivery-manager", &rbacv1.ClusterRole{})
		},
	},
	"fullnameOverride": {
		values: `fullnameOverride: canaries`,
		want: func(t *testing.T, r *rendered) {
			agent(t, r, "canaries-agent")
			binding := &rbacv1.ClusterRoleBinding{}
			r.get(t, "ClusterRoleBinding", "", "canaries-manager", binding)
			diff(t, "subjects", []rbacv1.Subject{{Kind: "ServiceAccount", Name: "canaries-agent", Namespace: testNamespace}}, binding.Subjects)
		},
	},
	"replicas": {
		values: `replicas: 3`,
		want: func(t *testing.T, r *rendered) {
			d, _ := agent(t, r, "serin-agent")
			diff(t, "replicas", ptr.To[int32](3), d.Spec.Replicas)
			selector := &metav1.LabelSelector{MatchLabels: map[string]string{
				"app.kubernetes.io/name": "serin", "app.kubernetes.io/instance": "serin", "app.kubernetes.io/component": "agent",
			}}
			pdb := &policyv1.PodDisruptionBudget{}
			r.get(t, "PodDisruptionBudget", testNamespace, "serin-agent", pdb)
			diff(t, "minAvailable", ptr.To(intstr.FromInt32(1)), pdb.Spec.MinAvailable)
			diff(t, "PDB selector", selector, pdb.Spec.Selector)
			diff(t, "anti-affinity", &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
				PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
					Weight: 100, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname", LabelSelector: selector},
				}},
			}}, d.Spec.Template.Spec.Affinity)
		},
	},
	"one replica: no PDB, no anti-affinity": {
		values: `replicas: 1`,
		want: func(t *testing.T, r *rendered) {
			d, _ := agent(t, r, "serin-agent")
			if _, ok := r.objects[objectKey("PodDisruptionBudget", testNamespace, "serin-agent")]; ok {
				t.Error("a PodDisruptionBudget of one replica would block every drain")
			}
			diff(t, "affinity", (*corev1.Affinity)(nil), d.Spec.Template.Spec.Affinity)
		},
	},
	"replicas without a leader": {
		values:  "replicas: 2\nleaderElection: {enabled: false}",
		wantErr: "replicas > 1 needs leaderElection.enabled",
	},
	"leaderElection disabled": {
		values: `leaderElection: {enabled: false}`,
		want: func(t *testing.T, r *rendered) {
			_, c := agent(t, r, "serin-agent")
			diff(t, "leader election flag", "--enable-leader-election=false", c.Args[3])
			for _, k := range r.keys() {
				if strings.Contains(k, "leader-election") {
					t.Errorf("%s rendered without leader election", k)
				}
			}
		},
	},
	"one namespace, Roles in the namespaces listed": {
		values: `
watchAllNamespaces: false
rbac: {namespaces: [flux-system, serin-system]}`,
		want: func(t *testing.T, r *rendered) {
			diff(t, "objects", []string{
				"ClusterRole /serin-edit", "ClusterRole /serin-tenant", "ClusterRole /serin-view",
				"CustomResourceDefinition /canaries.serin.dev", "CustomResourceDefinition /canarygroups.serin.dev",
				"CustomResourceDefinition /metrictemplates.serin.dev",
				"Deployment serin-system/serin-agent",
				"Role flux-system/serin-manager", "Role serin-system/serin-leader-election", "Role serin-system/serin-manager",
				"RoleBinding flux-system/serin-manager", "RoleBinding serin-system/serin-leader-election", "RoleBinding serin-system/serin-manager",
				"Service serin-system/serin-agent", "ServiceAccount serin-system/serin-agent",
			}, r.keys())
			_, c := agent(t, r, "serin-agent")
			diff(t, "watch flag", "--watch-all-namespaces=false", c.Args[0])
			binding := &rbacv1.RoleBinding{}
			r.get(t, "RoleBinding", "flux-system", "serin-manager", binding)
			diff(t, "subjects", []rbacv1.Subject{{Kind: "ServiceAccount", Name: "serin-agent", Namespace: testNamespace}}, binding.Subjects)
			diff(t, "role", rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "serin-manager"}, binding.RoleRef)
			if !strings.Contains(r.notes, "watching Canaries in serin-system only") {
				t.Errorf("the notes do not say what is watched:\n%s", r.notes)
			}
		},
	},
	"no RBAC, no CRDs": {
		values: `{rbac: {create: false}, crds: {install: false}}`,
		want: func(t *testing.T, r *rendered) {
			diff(t, "objects", []string{
				"Deployment serin-system/serin-agent", "Service serin-system/serin-agent", "ServiceAccount serin-system/serin-agent",
			}, r.keys())
			if !strings.Contains(r.notes, "did not install the CRDs") {
				t.Errorf("the notes do not say the CRDs are not installed:\n%s", r.notes)
			}
		},
	},
	"CRDs deleted on uninstall": {
		values: `crds: {keep: false}`,
		want: func(t *testing.T, r *rendered) {
			for _, k := range r.keys() {
				if obj := r.objects[k]; obj.GetKind() == "CustomResourceDefinition" {
					if _, ok := obj.GetAnnotations()["helm.sh/resource-policy"]; ok {
						t.Errorf("%s is kept on uninstall with crds.keep false", k)
					}
				}
			}
			if !strings.Contains(r.notes, "helm\nuninstall deletes them") {
				t.Errorf("the notes do not say helm uninstall deletes the CRDs:\n%s", r.notes)
			}
		},
	},
	"no roles for people or tenants": {
		values: `rbac: {aggregate: false, tenantRole: false}`,
		want: func(t *testing.T, r *rendered) {
			for _, name := range []string{"serin-view", "serin-edit", "serin-tenant"} {
				if _, ok := r.objects[objectKey("ClusterRole", "", name)]; ok {
					t.Errorf("ClusterRole %s rendered", name)
				}
			}
			r.get(t, "ClusterRole", "", "serin-manager", &rbacv1.ClusterRole{})
		},
	},
	"network policy": {
		values: `
networkPolicy:
  enabled: true
  egress:
    webhooks: null
    gitHosts: {cidrs: [203.0.113.0/24], ports: [{port: 443}]}
  ingress:
    metrics: {cidrs: [10.1.0.0/16], ports: [{port: 8080}]}`,
		want: func(t *testing.T, r *rendered) {
			np := &networkingv1.NetworkPolicy{}
			r.get(t, "NetworkPolicy", testNamespace, "serin-agent", np)
			diff(t, "pod selector", map[string]string{
				"app.kubernetes.io/name": "serin", "app.kubernetes.io/instance": "serin", "app.kubernetes.io/component": "agent",
			}, np.Spec.PodSelector.MatchLabels)
			diff(t, "policy types", []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}, np.Spec.PolicyTypes)
			private := []string{"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"}
			// By name: apiServer, dns, gitHosts, notificationController, prometheus.
			diff(t, "egress", []rule{
				{Ports: []string{"TCP/443", "TCP/6443"}},
				{Ports: []string{"UDP/53", "TCP/53"}},
				{Ports: []string{"TCP/443"}, CIDRs: []string{"203.0.113.0/24"}},
				{Ports: []string{"TCP/80", "TCP/9090"}, CIDRs: private},
				{Ports: []string{"TCP/9090"}, CIDRs: private},
			}, egressRules(np))
			diff(t, "ingress", []rule{
				{Ports: []string{"TCP/9440"}},
				{Ports: []string{"TCP/8080"}, CIDRs: []string{"10.1.0.0/16"}},
			}, ingressRules(np))
		},
	},
	"prometheus rule": {
		values: `{prometheusRule: {enabled: true, labels: {release: kube-prometheus-stack}}, fullnameOverride: delivery}`,
		want: func(t *testing.T, r *rendered) {
			pr, ok := r.objects[objectKey("PrometheusRule", testNamespace, "delivery-agent")]
			if !ok {
				t.Fatalf("no PrometheusRule rendered: %v", r.keys())
			}
			diff(t, "apiVersion", "monitoring.coreos.com/v1", pr.GetAPIVersion())
			diff(t, "release label", "kube-prometheus-stack", pr.GetLabels()["release"])
			groups, _, _ := unstructured.NestedSlice(pr.Object, "spec", "groups")
			var alerts []string
			for _, g := range groups {
				for _, rule := range g.(map[string]any)["rules"].([]any) {
					rule := rule.(map[string]any)
					alerts = append(alerts, rule["alert"].(string))
					if rule["alert"] == "SerinAgentDown" {
						diff(t, "SerinAgentDown's job", `absent(up{job="delivery-agent"} == 1)`, rule["expr"])
					}
				}
			}
			diff(t, "alerts", []string{
				"SerinCanaryHalted", "SerinCanaryFailed", "SerinCanaryProgressingTooLong", "SerinCanaryStalled",
				"SerinReconcileErrors", "SerinAnalysisStepsLate", "SerinNotificationsDropped", "SerinAgentDown",
			}, alerts)
		},
	},
	"grafana dashboard": {
		values: `grafanaDashboard: {enabled: true, namespace: monitoring, labels: {team: platform}}`,
		want: func(t *testing.T, r *rendered) {
			cm := &corev1.ConfigMap{}
			r.get(t, "ConfigMap", "monitoring", "serin-dashboard", cm)
			diff(t, "sidecar label", "1", cm.Labels["grafana_dashboard"])
			diff(t, "label", "platform", cm.Labels["team"])
			want, err := os.ReadFile(filepath.Join(repoRoot, "config", "grafana", "serin-dashboard.json"))
			if err != nil {
				t.Fatal(err)
			}
			diff(t, "dashboard", string(want), cm.Data["serin-dashboard.json"])
		},
	},
	"an existing service account": {
		values: `serviceAccount: {create: false, name: platform-serin}`,
		want: func(t *testing.T, r *rendered) {
			if _, ok := r.objects[objectKey("ServiceAccount", testNamespace, "serin-agent")]; ok {
				t.Error("a ServiceAccount is rendered with serviceAccount.create false")
			}
			d, _ := agent(t, r, "serin-agent")
			diff(t, "service account", "platform-serin", d.Spec.Template.Spec.ServiceAccountName)
			binding := &rbacv1.RoleBinding{}
			r.get(t, "RoleBinding", testNamespace, "serin-leader-election", binding)
			diff(t, "subject", "platform-serin", binding.Subjects[0].Name)
		},
	},
	"service account annotations": {
		values: `serviceAccount: {annotations: {iam.gke.io/gcp-service-account: serin@example.iam.gserviceaccount.com}}`,
		want: func(t *testing.T, r *rendered) {
			sa := &corev1.ServiceAccount{}
			r.get(t, "ServiceAccount", testNamespace, "serin-agent", sa)
			diff(t, "annotations", map[string]string{"iam.gke.io/gcp-service-account": "serin@example.iam.gserviceaccount.com"}, sa.Annotations)
		},
	},
	"agent flags": {
		values: `
logLevel: debug
eventsAddr: http://notification-controller.flux.svc/
metricsServer: http://prometheus.monitoring:9090
extraArgs: [--data-plane=istio, --no-cross-namespace-refs]`,
		want: func(t *testing.T, r *rendered) {
			_, c := agent(t, r, "serin-agent")
			diff(t, "args", []string{
				"--watch-all-namespaces=true", "--log-level=debug", "--log-encoding=json", "--enable-leader-election=true",
				"--gitops-clone-disk-budget=896Mi", "--events-addr=http://notification-controller.flux.svc/", "--metrics-server=http://prometheus.monitoring:9090",
				"--data-plane=istio", "--no-cross-namespace-refs",
			}, c.Args)
		},
	},
	"clone disk": {
		values: `cloneDiskMiB: 2048`,
		want: func(t *testing.T, r *rendered) {
			d, c := agent(t, r, "serin-agent")
			diff(t, "clone disk budget flag", "--gitops-clone-disk-budget=1792Mi", c.Args[4])
			var tmp *corev1.EmptyDirVolumeSource
			for _, v := range d.Spec.Template.Spec.Volumes {
				if v.Name == "tmp" {
					tmp = v.EmptyDir
				}
			}
			if tmp == nil || tmp.SizeLimit == nil || tmp.SizeLimit.Cmp(resource.MustParse("2Gi")) != 0 {
				t.Fatalf("the tmp volume: %+v, want an emptyDir of 2Gi", tmp)
			}
		},
	},
	"no events address": {
		values: `eventsAddr: ""`,
		want: func(t *testing.T, r *rendered) {
			_, c := agent(t, r, "serin-agent")
			diff(t, "args", defaultArgs[:5], c.Args)
		},
	},
	"resources without a memory limit": {
		// Helm merges values into the defaults: null removes a default.
		values: `resources: {requests: {cpu: 250m, memory: 128Mi}, limits: {cpu: "1", memory: null}}`,
		want: func(t *testing.T, r *rendered) {
			_, c := agent(t, r, "serin-agent")
			diff(t, "resources", corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
			}, c.Resources)
			diff(t, "env (no GOMEMLIMIT without a memory limit)", []string{"RUNTIME_NAMESPACE"}, envNames(c))
		},
	},
	"security contexts": {
		// Merged into the defaults; fsGroup: null removes the default's.
		values: `
podSecurityContext: {runAsUser: 10001, fsGroup: null}
securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: false, capabilities: {drop: [ALL]}}`,
		want: func(t *testing.T, r *rendered) {
			d, c := agent(t, r, "serin-agent")
			diff(t, "pod security context", &corev1.PodSecurityContext{
				RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](10001),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			}, d.Spec.Template.Spec.SecurityContext)
			diff(t, "container security context", &corev1.SecurityContext{
				AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(false),
				Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			}, c.SecurityContext)
		},
	},
	"pod metadata and scheduling": {
		values: `
podAnnotations: {cluster-autoscaler.kubernetes.io/safe-to-evict: "true"}
podLabels: {team: platform}
nodeSelector: {kubernetes.io/os: linux}
tolerations: [{key: dedicated, operator: Equal, value: platform, effect: NoSchedule}]
affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: pool, operator: In, values: [system]}]}]}}}
priorityClassName: system-cluster-critical`,
		want: func(t *testing.T, r *rendered) {
			d, _ := agent(t, r, "serin-agent")
			pod := d.Spec.Template
			diff(t, "annotations", map[string]string{
				"prometheus.io/scrape": "true", "prometheus.io/port": "8080", "cluster-autoscaler.kubernetes.io/safe-to-evict": "true",
			}, pod.Annotations)
			diff(t, "labels", map[string]string{
				"app.kubernetes.io/name": "serin", "app.kubernetes.io/instance": "serin", "app.kubernetes.io/component": "agent", "team": "platform",
			}, pod.Labels)
			diff(t, "selector", map[string]string{
				"app.kubernetes.io/name": "serin", "app.kubernetes.io/instance": "serin", "app.kubernetes.io/component": "agent",
			}, d.Spec.Selector.MatchLabels)
			diff(t, "node selector", map[string]string{"kubernetes.io/os": "linux"}, pod.Spec.NodeSelector)
			diff(t, "tolerations", []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "platform", Effect: corev1.TaintEffectNoSchedule}},
				pod.Spec.Tolerations)
			diff(t, "affinity", &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "pool", Operator: corev1.NodeSelectorOpIn, Values: []string{"system"}}},
				}}},
			}}, pod.Spec.Affinity)
			diff(t, "priority class", "system-cluster-critical", pod.Spec.PriorityClassName)
		},
	},
	"service monitor": {
		values: `serviceMonitor: {enabled: true, interval: 15s, scrapeTimeout: 10s, labels: {release: kube-prometheus-stack}}`,
		want: func(t *testing.T, r *rendered) {
			sm, ok := r.objects[objectKey("ServiceMonitor", testNamespace, "serin-agent")]
			if !ok {
				t.Fatalf("no ServiceMonitor rendered: %v", r.keys())
			}
			diff(t, "apiVersion", "monitoring.coreos.com/v1", sm.GetAPIVersion())
			diff(t, "release label", "kube-prometheus-stack", sm.GetLabels()["release"])
			diff(t, "spec", map[string]any{
				"namespaceSelector": map[string]any{"matchNames": []any{testNamespace}},
				"selector": map[string]any{"matchLabels": map[string]any{
					"app.kubernetes.io/name": "serin", "app.kubernetes.io/instance": "serin", "app.kubernetes.io/component": "agent",
				}},
				"endpoints": []any{map[string]any{"port": "http-prom", "path": "/metrics", "interval": "15s", "scrapeTimeout": "10s"}},
			}, sm.Object["spec"])
			// The ServiceMonitor selects the metrics Service, by its port name.
			svc := &corev1.Service{}
			r.get(t, "Service", testNamespace, "serin-agent", svc)
			diff(t, "service port", "http-prom", svc.Spec.Ports[0].Name)
			diff(t, "service selector", map[string]string{
				"app.kubernetes.io/name": "serin", "app.kubernetes.io/instance": "serin", "app.kubernetes.io/component": "agent",
			}, svc.Spec.Selector)
		},
	},
	// values.schema.json refuses a values file with a message.
	"a value the chart does not have": {
		values:  `replica: 2`,
		wantErr: "additional properties 'replica' not allowed",
	},
	"a number as a word": {
		values:  `replicas: two`,
		wantErr: "at '/replicas': got string, want integer",
	},
	"a log level the agent does not know": {
		values:  `logLevel: verbose`,
		wantErr: "at '/logLevel'",
	},
	"a network rule without ports": {
		values:  `networkPolicy: {egress: {vault: {cidrs: [10.2.0.0/16]}}}`,
		wantErr: "at '/networkPolicy/egress/vault': missing property 'ports'",
	},
	"a CIDR that is not one": {
		values:  `networkPolicy: {egress: {vault: {cidrs: [vault.example], ports: [{port: 8200}]}}}`,
		wantErr: "at '/networkPolicy/egress/vault/cidrs/0'",
	},
	"a cluster older than serin supports (serin check's minimum)": {
		kubeVersion: &common.KubeVersion{Version: "v1.29.9", Major: "1", Minor: "29"},
		wantErr:     "chart requires kubeVersion: >=1.30.0-0 which is incompatible with Kubernetes v1.29.9",
	},
}

// rule is a NetworkPolicy rule as a test reads it: PROTOCOL/PORT and CIDRs.
type rule struct{ Ports, CIDRs []string }

func egressRules(np *networkingv1.NetworkPolicy) []rule {
	var rules []rule
	for _, r := range np.Spec.Egress {
		rules = append(rules, readRule(r.Ports, r.To))
	}
	return rules
}

func ingressRules(np *networkingv1.NetworkPolicy) []rule {
	var rules []rule
	for _, r := range np.Spec.Ingress {
		rules = append(rules, readRule(r.Ports, r.From))
	}
	return rules
}

func readRule(ports []networkingv1.NetworkPolicyPort, peers []networkingv1.NetworkPolicyPeer) rule {
	var r rule
	for _, p := range ports {
		r.Ports = append(r.Ports, string(*p.Protocol)+"/"+p.Port.String())
	}
	for _, p := range peers {
		r.CIDRs = append(r.CIDRs, p.IPBlock.CIDR)
	}
	return r
}

func TestValues(t *testing.T) {
	ch := loadChart(t)
	for name, tc := range valueCases {
		t.Run(name, func(t *testing.T) {
			kubeVersion := tc.kubeVersion
			if kubeVersion == nil {
				kubeVersion = testKubeVersion
			}
			r, err := render(context.Background(), ch, parseValues(t, tc.values), kubeVersion)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.want(t, r)
		})
	}
}
