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
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/routing"
)

// generatedKind is a kind of object the agent generates for a Canary
// (controllers/: the initialize and sync actions, routing/).
type generatedKind struct {
	gvk schema.GroupVersionKind
	// hasStatus tells that its health is in a status to read: the kinds
	// without one (ConfigMaps, Secrets, ControllerRevisions) are judged
	// from their metadata, and a Secret's data is never read.
	hasStatus bool
}

var httpRouteGVK = schema.GroupVersionKind{Group: gatewayv1.GroupName, Version: "v1", Kind: "HTTPRoute"}

// generatedKinds are listed in the Canary's namespace, in the tree's
// order: workloads, autoscalers, Services, routes, copied configs, the
// promoted revisions. A kind whose API is not installed (Gateway API,
// KEDA) is left out.
var generatedKinds = []generatedKind{
	{gvk: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, hasStatus: true},
	{gvk: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "DaemonSet"}, hasStatus: true},
	{gvk: schema.GroupVersionKind{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"}, hasStatus: true},
	{gvk: schema.GroupVersionKind{Group: "keda.sh", Version: "v1alpha1", Kind: "ScaledObject"}, hasStatus: true},
	{gvk: schema.GroupVersionKind{Version: "v1", Kind: "Service"}, hasStatus: true},
	{gvk: httpRouteGVK, hasStatus: true},
	{gvk: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}},
	{gvk: schema.GroupVersionKind{Version: "v1", Kind: "Secret"}},
	{gvk: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ControllerRevision"}},
}

// The roles of an object in a Canary's tree.
const (
	// roleTarget is the object spec.targetRef names.
	roleTarget = "target"
	// roleGenerated is an object the Canary controls (its controller
	// owner reference).
	roleGenerated = "generated"
)

// treeNode is an object of a tree, as `serin tree` prints it and as its
// -o json|yaml gives it. Every field is always present.
type treeNode struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
	// Role is "target" or "generated" under a Canary; empty for a Canary
	// or a CanaryGroup.
	Role string `json:"role"`
	// Status is the object's kstatus: Current, InProgress, Failed,
	// Terminating, NotFound or Unknown.
	Status  string `json:"status"`
	Message string `json:"message"`
	// Resources are the objects under this one.
	Resources []treeNode `json:"resources"`
}

func newTreeCommand(env *environment) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tree",
		Short: "Print the objects a Canary or a CanaryGroup generated, with their health",
		Long: `Print, as flux tree does for a Kustomization, the objects of a Canary as a
tree: its target (spec.targetRef), and every object the agent generated for
it (the primary workload and its autoscaler, the Services, the HTTPRoute, the
copied ConfigMaps and Secrets, the promoted revisions), each with its health
as kstatus reads it (Current, InProgress, Failed, Terminating, NotFound).
Generated objects are those the Canary controls (their controller owner
reference): an object that only has a generated name is not one.`,
	}
	cmd.AddCommand(newTreeCanaryCommand(env), newTreeGroupCommand(env))
	return cmd
}

func newTreeCanaryCommand(env *environment) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "canary NAME",
		Short: "Print a Canary's target and generated objects, with their health",
		Example: `  serin tree canary podinfo -n apps
  serin tree canary podinfo -n apps -o json`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: canaryNameCompletion(env),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTree(cmd, env, output, func(ctx context.Context, t *treeReader, namespace string) (treeNode, error) {
				canary, err := getCanary(ctx, t.kube, client.ObjectKey{Namespace: namespace, Name: args[0]})
				if err != nil {
					return treeNode{}, err
				}
				return t.canaryTree(ctx, canary)
			})
		},
	}
	addOutputFlag(cmd, &output, outputJSON, outputYAML)
	return cmd
}

func newTreeGroupCommand(env *environment) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:               "group NAME",
		Aliases:           []string{"canarygroup"},
		Short:             "Print a CanaryGroup's member Canaries and their trees",
		Example:           `  serin tree group storefront -n apps`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: groupNameCompletion(env),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTree(cmd, env, output, func(ctx context.Context, t *treeReader, namespace string) (treeNode, error) {
				group, err := getGroup(ctx, t.kube, client.ObjectKey{Namespace: namespace, Name: args[0]})
				if err != nil {
					return treeNode{}, err
				}
				return t.groupTree(ctx, group)
			})
		},
	}
	addOutputFlag(cmd, &output, outputJSON, outputYAML)
	return cmd
}

func runTree(cmd *cobra.Command, env *environment, output string,
	build func(context.Context, *treeReader, string) (treeNode, error)) error {
	format, err := parseOutputFormat(output, outputJSON, outputYAML)
	if err != nil {
		return err
	}
	s, err := env.open(cmd)
	if err != nil {
		return err
	}
	defer s.cancel()
	reader := &treeReader{kube: s.kube, log: statusLog{cmd.ErrOrStderr()}}
	tree, err := build(s.ctx, reader, s.namespace)
	if err != nil {
		return err
	}
	if format.structured() {
		return writeStructured(cmd.OutOrStdout(), format, tree)
	}
	tree.write(cmd.OutOrStdout())
	return nil
}

// treeReader reads the objects of trees; the objects of a namespace are
// listed once per command.
type treeReader struct {
	kube client.Client
	log  statusLog
	// listed are the objects of the generated kinds, by namespace.
	listed map[string][]metav1.PartialObjectMetadata
}

// groupTree is a CanaryGroup with its members' trees, in the order of
// spec.members; a member that does not exist is NotFound.
func (t *treeReader) groupTree(ctx context.Context, group *v1alpha1.CanaryGroup) (treeNode, error) {
	root := nodeOf(v1alpha1.GroupVersion.WithKind(v1alpha1.CanaryGroupKind), group.Namespace, group.Name, "")
	root.setHealth(toUnstructured(group, root.APIVersion, root.Kind))
	for _, member := range group.Spec.Members {
		canary := &v1alpha1.Canary{}
		err := t.kube.Get(ctx, client.ObjectKey{Namespace: group.Namespace, Name: member.Name}, canary)
		if apierrors.IsNotFound(err) {
			node := nodeOf(v1alpha1.GroupVersion.WithKind(v1alpha1.CanaryKind), group.Namespace, member.Name, "")
			node.Status = string(status.NotFoundStatus)
			root.Resources = append(root.Resources, node)
			continue
		}
		if err != nil {
			return treeNode{}, err
		}
		node, err := t.canaryTree(ctx, canary)
		if err != nil {
			return treeNode{}, err
		}
		root.Resources = append(root.Resources, node)
	}
	return root, nil
}

// canaryTree is a Canary with its target, then the objects it controls.
func (t *treeReader) canaryTree(ctx context.Context, canary *v1alpha1.Canary) (treeNode, error) {
	root := nodeOf(v1alpha1.GroupVersion.WithKind(v1alpha1.CanaryKind), canary.Namespace, canary.Name, "")
	root.setHealth(toUnstructured(canary, root.APIVersion, root.Kind))

	ref := canary.Spec.TargetRef
	targetGVK := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
	target, err := t.read(ctx, targetGVK, canary.Namespace, ref.Name)
	if err != nil {
		return treeNode{}, err
	}
	node := nodeOf(targetGVK, canary.Namespace, ref.Name, roleTarget)
	node.setHealth(target)
	root.Resources = append(root.Resources, node)

	expected := expectedGenerated(canary)
	for _, kind := range generatedKinds {
		objects, err := t.list(ctx, kind.gvk, canary.Namespace)
		if err != nil {
			return treeNode{}, err
		}
		found := map[string]bool{}
		for i := range objects {
			o := &objects[i]
			if !metav1.IsControlledBy(o, canary) || (kind.gvk.GroupKind() == targetGVK.GroupKind() && o.Name == ref.Name) {
				continue
			}
			object := toUnstructured(o, kind.gvk.GroupVersion().String(), kind.gvk.Kind)
			if kind.hasStatus {
				if object, err = t.read(ctx, kind.gvk, o.Namespace, o.Name); err != nil {
					return treeNode{}, err
				}
			}
			node := nodeOf(kind.gvk, o.Namespace, o.Name, roleGenerated)
			node.setHealth(object)
			root.Resources = append(root.Resources, node)
			found[o.Name] = true
		}
		for _, name := range expected[kind.gvk] {
			if found[name] {
				continue
			}
			node := nodeOf(kind.gvk, canary.Namespace, name, roleGenerated)
			object, err := t.read(ctx, kind.gvk, canary.Namespace, name)
			if err != nil {
				return treeNode{}, err
			}
			if object == nil {
				node.Status, node.Message = string(status.NotFoundStatus), "the agent creates it again at its next reconcile"
			} else {
				node.Status, node.Message = string(status.FailedStatus), "not generated by this Canary: it is not the object's controller"
			}
			root.Resources = append(root.Resources, node)
		}
	}
	return root, nil
}

// expectedGenerated are the objects, by kind, that an initialized Canary of
// a Deployment or a DaemonSet always has (controllers/observe.go): the
// primary workload, the apex, primary and canary Services, and the
// HTTPRoute of the gatewayapi router; a worker's (routing.provider
// replicas) only its primary, and a StatefulSet's none (it is rolled out
// in place). A Canary that is not initialized yet (no phase, or
// Initializing) expects none.
func expectedGenerated(canary *v1alpha1.Canary) map[schema.GroupVersionKind][]string {
	if canary.Status.Phase == "" || canary.Status.Phase == v1alpha1.PhaseInitializing {
		return nil
	}
	ref := canary.Spec.TargetRef
	if ref.Kind != v1alpha1.DeploymentKind && ref.Kind != v1alpha1.DaemonSetKind {
		return nil
	}
	expected := map[schema.GroupVersionKind][]string{
		{Group: "apps", Version: "v1", Kind: ref.Kind}: {canary.GetPrimaryName()},
	}
	if canary.RoutesByReplicas() {
		// A worker: no Service, no route.
		return expected
	}
	service := schema.GroupVersionKind{Version: "v1", Kind: "Service"}
	expected[service] = []string{canary.GetServiceName(), canary.GetCanaryServiceName(), canary.GetPrimaryServiceName()}
	if canary.GetRoutingProvider() == v1alpha1.GatewayAPIRouting && len(canary.Spec.Routing.RouteRefs) == 0 {
		// The generated route; the routes of routing.routeRefs are the
		// user's, not generated.
		expected[httpRouteGVK] = []string{canary.GetServiceName()}
	}
	return expected
}

// list returns the objects of kind in namespace, by name, as metadata
// only; none when the kind's API is not installed, or when listing it is
// forbidden (with a warning).
func (t *treeReader) list(ctx context.Context, gvk schema.GroupVersionKind, namespace string) ([]metav1.PartialObjectMetadata, error) {
	key := namespace + "/" + gvk.String()
	if objects, ok := t.listed[key]; ok {
		return objects, nil
	}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	err := t.kube.List(ctx, list, client.InNamespace(namespace))
	switch {
	case meta.IsNoMatchError(err) || apierrors.IsNotFound(err):
		list.Items = nil
	case apierrors.IsForbidden(err):
		t.log.warningf("%s objects left out: %v", gvk.Kind, err)
		list.Items = nil
	case err != nil:
		return nil, fmt.Errorf("listing %s objects: %w", gvk.Kind, err)
	}
	slices.SortFunc(list.Items, func(a, b metav1.PartialObjectMetadata) int { return strings.Compare(a.Name, b.Name) })
	if t.listed == nil {
		t.listed = map[string][]metav1.PartialObjectMetadata{}
	}
	t.listed[key] = list.Items
	return list.Items, nil
}

// read gets an object whole; nil when it does not exist.
func (t *treeReader) read(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	err := t.kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, u)
	switch {
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading %s %s: %w", gvk.Kind, name, err)
	}
	return u, nil
}

func nodeOf(gvk schema.GroupVersionKind, namespace, name, role string) treeNode {
	return treeNode{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Namespace: namespace, Name: name,
		Role: role, Resources: []treeNode{}}
}

// setHealth sets the node's status from kstatus; NotFound for nil. An
// HTTPRoute, which kstatus reads as Current whatever its parents say, is
// InProgress until every parent Gateway programmed it, and Failed when one
// rejected it, as the agent judges it.
func (n *treeNode) setHealth(object *unstructured.Unstructured) {
	if object == nil {
		n.Status = string(status.NotFoundStatus)
		return
	}
	result, err := status.Compute(object)
	if err != nil {
		n.Status, n.Message = string(status.UnknownStatus), err.Error()
		return
	}
	n.Status, n.Message = string(result.Status), result.Message
	if result.Status != status.CurrentStatus || object.GroupVersionKind() != httpRouteGVK {
		return
	}
	route := &gatewayv1.HTTPRoute{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(object.Object, route); err != nil {
		n.Status, n.Message = string(status.UnknownStatus), err.Error()
		return
	}
	switch st := routing.HTTPRouteStatus(route); {
	case st.Rejected:
		n.Status, n.Message = string(status.FailedStatus), st.Message
	case !st.Programmed:
		n.Status, n.Message = string(status.InProgressStatus), st.Message
	}
}

// toUnstructured converts a typed object for kstatus; nil if it cannot.
func toUnstructured(object any, apiVersion, kind string) *unstructured.Unstructured {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(object)
	if err != nil {
		return nil
	}
	u := &unstructured.Unstructured{Object: content}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	return u
}

// write prints the tree as flux tree does: the root, then each object
// under it, one a line, with its health.
func (n treeNode) write(w io.Writer) {
	fmt.Fprintln(w, n.label())
	n.writeResources(w, "")
}

func (n treeNode) writeResources(w io.Writer, indent string) {
	for i, child := range n.Resources {
		branch, next := "├── ", "│   "
		if i == len(n.Resources)-1 {
			branch, next = "└── ", "    "
		}
		fmt.Fprintln(w, indent+branch+child.label())
		child.writeResources(w, indent+next)
	}
}

// label is "Kind/namespace/name (role, Status: message)": the role of a
// target only, the message only when the object is not Current.
func (n treeNode) label() string {
	health := n.Status
	if n.Message != "" && n.Status != string(status.CurrentStatus) {
		health += ": " + n.Message
	}
	if n.Role == roleTarget {
		health = roleTarget + ", " + health
	}
	return fmt.Sprintf("%s/%s/%s (%s)", n.Kind, n.Namespace, n.Name, health)
}
