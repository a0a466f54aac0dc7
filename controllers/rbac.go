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

// The agent's ClusterRole (config/rbac/role.yaml), verb by verb what the
// code calls; docs/security.md explains each line. Cached kinds need get,
// list and watch; reads through the APIReader only get or list. Nothing
// is ever deleted but pruned ControllerRevisions: generated objects go
// with their Canary through garbage collection. The leader election Lease
// is in a namespaced Role (config/rbac/leader_election_role.yaml).

// Canaries are cached; their finalizer and status are patched.
// +kubebuilder:rbac:groups=serin.dev,resources=canaries,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=serin.dev,resources=canaries/status,verbs=patch
// Owner references with blockOwnerDeletion on the generated objects.
// +kubebuilder:rbac:groups=serin.dev,resources=canaries/finalizers,verbs=update
// MetricTemplates are cached.
// +kubebuilder:rbac:groups=serin.dev,resources=metrictemplates,verbs=get;list;watch
// +kubebuilder:rbac:groups=serin.dev,resources=canarygroups,verbs=get;list;watch
// +kubebuilder:rbac:groups=serin.dev,resources=canarygroups/status,verbs=patch

// Targets, the primary Deployment or DaemonSet and the generated Services
// are cached, created, updated (create-or-update) and patched (replicas, a
// DaemonSet's scale-to-zero node selector, restore, selectors, orphaning).
// The baseline Deployment (analysis.judge.baseline) is scaled to zero when
// its analysis ends; the garbage collector deletes it and its Service with
// the Canary: the agent deletes no Deployment or Service.
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups=apps,resources=daemonsets,verbs=get;list;watch;create;update;patch
// A StatefulSet target: cached, its partition and the watch label patched
// (serin creates none).
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;update;patch
// The primary's ReplicaSets are listed live when it is restored.
// +kubebuilder:rbac:groups=apps,resources=replicasets,verbs=list
// A side's pods are listed live by the pod-restarts check (no pod
// informer: at thousands of canaries pods are the most numerous objects).
// +kubebuilder:rbac:groups="",resources=pods,verbs=list
// A rolled-back StatefulSet's pods of the failed revision are evicted
// (their disruption budget honoured), for its controller to re-create them
// at the current revision with their names and volumes; no other pod is.
// +kubebuilder:rbac:groups="",resources=pods/eviction,verbs=create
// EndpointSlices are cached: the readiness of a Service target.
// +kubebuilder:rbac:groups=discovery.k8s.io,resources=endpointslices,verbs=get;list;watch
// The primary's autoscaler is cached and created or updated; the target's
// is patched with the watch label (cache_scope.go).
// +kubebuilder:rbac:groups=autoscaling,resources=horizontalpodautoscalers,verbs=get;list;watch;create;update;patch
// KEDA's ScaledObjects likewise, the target's patched (its pause).
// +kubebuilder:rbac:groups=keda.sh,resources=scaledobjects,verbs=get;list;watch;create;update;patch
// The HTTPRoute is cached, created or updated, and patched (weights); the
// pin route next to a user's route (analysis.pin) too, never deleted.
// +kubebuilder:rbac:groups=gateway.networking.k8s.io,resources=httproutes,verbs=get;list;watch;create;update;patch
// A GRPCRoute of routing.routeRefs is cached and patched (weights); serin
// never creates one.
// +kubebuilder:rbac:groups=gateway.networking.k8s.io,resources=grpcroutes,verbs=get;list;watch;update;patch

// ConfigMaps and Secrets are watched by metadata only (list, watch), their
// data read live (get), and the primary's copies created and updated; those
// a target uses are patched with the watch label (cache_scope.go).
// +kubebuilder:rbac:groups="",resources=configmaps;secrets,verbs=get;list;watch;create;update;patch
// Kubernetes Events of the Canaries (core/v1 recorder).
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// The Flux objects that applied a target, the GitRepository of a GitOps
// revert and the Providers of direct notifications are read live.
// +kubebuilder:rbac:groups=kustomize.toolkit.fluxcd.io,resources=kustomizations,verbs=get
// +kubebuilder:rbac:groups=helm.toolkit.fluxcd.io,resources=helmreleases,verbs=get
// +kubebuilder:rbac:groups=source.toolkit.fluxcd.io,resources=gitrepositories;helmrepositories,verbs=get
// +kubebuilder:rbac:groups=notification.toolkit.fluxcd.io,resources=providers,verbs=get

// MetricTemplates of type externalmetrics read the external metrics API
// (its resources are the metrics' names).
// +kubebuilder:rbac:groups=external.metrics.k8s.io,resources=*,verbs=get

// A Canary's writes impersonate its service account (spec.serviceAccountName).
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=impersonate
