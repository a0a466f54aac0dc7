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
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fluxcd/pkg/apis/meta"

	"github.com/serin-dev/serin/api/v1alpha1"
)

func newGetCommand(env *environment) *cobra.Command {
	get := &cobra.Command{
		Use:   "get",
		Short: "Print the status of Canaries",
		Long:  "The get sub-commands print the status of Canaries, as flux get does for Flux objects.",
	}
	get.AddCommand(newGetCanariesCommand(env), newGetCanaryCommand(env))
	return get
}

// getCanariesOptions are the flags of `serin get canaries`.
type getCanariesOptions struct {
	allNamespaces  bool
	noHeader       bool
	watch          bool
	statusSelector string
	labelSelector  string
}

func newGetCanariesCommand(env *environment) *cobra.Command {
	var opts getCanariesOptions
	cmd := &cobra.Command{
		Use:     "canaries [NAME]",
		Aliases: []string{"cn"},
		Short:   "List Canaries and their status",
		Long: `List Canaries with their revision, phase, canary weight, suspension and
readiness, laid out like flux get kustomizations.`,
		Example: `  # The Canaries of the current namespace
  serin get canaries

  # Every Canary that is not ready, in all namespaces
  serin get canaries -A --status-selector ready=false

  # Follow one Canary's rollout
  serin get canaries podinfo -n apps --watch`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: canaryNameCompletion(env),
		RunE: func(cmd *cobra.Command, args []string) error {
			return opts.run(cmd, env, args)
		},
	}
	flags := cmd.Flags()
	flags.BoolVarP(&opts.allNamespaces, "all-namespaces", "A", false, "list the Canaries of all namespaces")
	flags.BoolVar(&opts.noHeader, "no-header", false, "skip the header when printing the results")
	flags.BoolVarP(&opts.watch, "watch", "w", false, "after listing the Canaries, print a row for every change until --timeout")
	flags.StringVar(&opts.statusSelector, "status-selector", "",
		"print only the Canaries whose condition has the given status, e.g. ready=false")
	flags.StringVarP(&opts.labelSelector, "selector", "l", "", "label selector, e.g. app=podinfo")
	return cmd
}

func (o getCanariesOptions) run(cmd *cobra.Command, env *environment, args []string) error {
	scope, err := o.scope(env, args)
	if err != nil {
		return err
	}
	kube, err := env.newClient()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), env.timeout)
	defer cancel()

	printer := newCanaryRowPrinter(cmd.OutOrStdout(), o, scope)
	if o.watch {
		return printer.watch(ctx, kube, env.timeout)
	}
	list := &v1alpha1.CanaryList{}
	if err := kube.List(ctx, list, scope.listOptions()...); err != nil {
		return err
	}
	if len(list.Items) == 0 {
		return scope.notFoundError()
	}
	return printer.printTable(list.Items)
}

func (o getCanariesOptions) scope(env *environment, args []string) (canaryScope, error) {
	var scope canaryScope
	var err error
	if scope.conditions, err = parseConditionSelector(o.statusSelector); err != nil {
		return scope, err
	}
	if scope.labels, err = labels.Parse(o.labelSelector); err != nil {
		return scope, fmt.Errorf("invalid label selector %q: %w", o.labelSelector, err)
	}
	if len(args) > 0 {
		scope.name = args[0]
	}
	if !o.allNamespaces {
		scope.namespace, err = env.namespace()
	}
	return scope, err
}

// canaryScope is which Canaries a get command is about.
type canaryScope struct {
	namespace  string // empty for all namespaces
	name       string // empty for all names
	labels     labels.Selector
	conditions *conditionSelector
}

func (s canaryScope) listOptions() []client.ListOption {
	opts := []client.ListOption{client.MatchingLabelsSelector{Selector: s.labels}}
	if s.namespace != "" {
		opts = append(opts, client.InNamespace(s.namespace))
	}
	if s.name != "" {
		opts = append(opts, client.MatchingFields{"metadata.name": s.name})
	}
	return opts
}

// matches tells whether a Canary seen by a watch belongs to the scope: a
// watch may deliver more than was asked (a fake client ignores selectors).
func (s canaryScope) matches(canary *v1alpha1.Canary) bool {
	return (s.namespace == "" || canary.Namespace == s.namespace) &&
		(s.name == "" || canary.Name == s.name) &&
		s.labels.Matches(labels.Set(canary.Labels))
}

// notFoundError words an empty result the way flux does.
func (s canaryScope) notFoundError() error {
	where := "any namespace"
	if s.namespace != "" {
		where = fmt.Sprintf("%q namespace", s.namespace)
	}
	if s.name != "" {
		return fmt.Errorf("%s object '%s' not found in %s", v1alpha1.CanaryKind, s.name, where)
	}
	return fmt.Errorf("no %s objects found in %s", v1alpha1.CanaryKind, where)
}

// conditionSelector filters on a condition's status: ready=false.
type conditionSelector struct {
	conditionType, status string
}

func parseConditionSelector(s string) (*conditionSelector, error) {
	if s == "" {
		return nil, nil
	}
	conditionType, status, ok := strings.Cut(s, "=")
	if !ok {
		return nil, fmt.Errorf("expected status selector in type=status format, but found: %s", s)
	}
	return &conditionSelector{conditionType: conditionType, status: status}, nil
}

// matches compares type and status case-insensitively; a nil selector
// matches every Canary, and a Canary without the condition matches none.
func (s *conditionSelector) matches(conditions []metav1.Condition) bool {
	if s == nil {
		return true
	}
	for _, c := range conditions {
		if strings.EqualFold(c.Type, s.conditionType) {
			return strings.EqualFold(string(c.Status), s.status)
		}
	}
	return false
}

// canaryHeader is the header of `serin get canaries`.
func canaryHeader(includeNamespace bool) []string {
	header := []string{"NAME", "REVISION", "PHASE", "WEIGHT", "SUSPENDED", "READY", "MESSAGE"}
	if includeNamespace {
		header = append([]string{"NAMESPACE"}, header...)
	}
	return header
}

// canaryRow summarises a Canary in the columns of canaryHeader.
func canaryRow(canary *v1alpha1.Canary, includeNamespace bool, colors palette) []string {
	revision := canary.Status.LastAttemptedRevision
	if revision == "" {
		revision = canary.Status.LastPromotedRevision
	}
	ready, message := readyStatusAndMessage(canary.Status.Conditions)
	row := []string{
		canary.Name,
		shortenHashes(revision),
		colors.phase(canary.Status.Phase),
		strconv.Itoa(canary.Status.CanaryWeight),
		titleBool(canary.Spec.Suspend),
		colors.conditionStatus(ready),
		shortenHashes(message),
	}
	if includeNamespace {
		row = append([]string{canary.Namespace}, row...)
	}
	return row
}

// titleBool prints a bool as flux does: True or False.
func titleBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// readyStatusAndMessage reads the Ready condition; without one the Canary
// has not been reconciled yet, which flux prints as False.
func readyStatusAndMessage(conditions []metav1.Condition) (status, message string) {
	if c := apimeta.FindStatusCondition(conditions, meta.ReadyCondition); c != nil {
		return string(c.Status), c.Message
	}
	return string(metav1.ConditionFalse), "waiting to be reconciled"
}

// sortCanaries orders by namespace then name, as the API server lists them.
func sortCanaries(canaries []v1alpha1.Canary) {
	sort.SliceStable(canaries, func(i, j int) bool {
		if canaries[i].Namespace != canaries[j].Namespace {
			return canaries[i].Namespace < canaries[j].Namespace
		}
		return canaries[i].Name < canaries[j].Name
	})
}
