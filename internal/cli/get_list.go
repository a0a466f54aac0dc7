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
	"strings"

	"github.com/spf13/cobra"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fluxcd/pkg/apis/meta"
)

// listedObject is an object `serin get canaries` or `serin get groups`
// lists: a Canary or a CanaryGroup, through a pointer to T.
type listedObject[T any] interface {
	*T
	client.Object
	GetConditions() []metav1.Condition
}

// listedKind is what the list commands of two kinds differ in: how to
// list and follow the objects, and their columns.
type listedKind[T any, P listedObject[T]] struct {
	// kind names the objects in errors: Canary, CanaryGroup.
	kind string
	// header is the header of the table, row an object's row, both with
	// the optional columns of layout.
	header func(layout tableLayout) []string
	row    func(object P, layout tableLayout, colors palette) []string
	// widen adds to layout the optional columns the object has something
	// to show in; nil when no column of the kind depends on the objects.
	widen func(layout tableLayout, object P) tableLayout
	// summarize is the object as -o json|yaml prints it: its row's cells,
	// unabridged, and the object (canarySummary, groupSummary).
	summarize func(object P) any
	// list lists the objects.
	list func(ctx context.Context, kube client.Client, opts []client.ListOption) ([]T, error)
	// follow lists the objects, then hands over each change until the
	// watch ends, as canarywatch.Follow does.
	follow func(ctx context.Context, kube client.WithWatch, opts []client.ListOption,
		listed func([]T) error, changed func(P, bool) error) error
}

// tableLayout is which optional columns a table of `serin get canaries`
// or `serin get groups` has.
type tableLayout struct {
	// namespace is the NAMESPACE column, first: with --all-namespaces.
	namespace bool
	// wave is the WAVE column of Canaries, before MESSAGE: when one of
	// the Canaries printed has stages to promote to (spec.gitops.promote).
	wave bool
	// wide is -o wide: the columns a kind shows only there, every
	// optional column, and revisions and messages uncut.
	wide bool
}

// cell is a revision or message as a column shows it: cut to the first 8
// characters of its hashes, unless the table is wide.
func (l tableLayout) cell(s string) string {
	if l.wide {
		return s
	}
	return shortenHashes(s)
}

// getListOptions are the flags of `serin get canaries` and `serin get
// groups`.
type getListOptions struct {
	allNamespaces  bool
	noHeader       bool
	watch          bool
	statusSelector string
	labelSelector  string
	output         string
}

// addFlags binds the flags; plural names the objects in their help.
func (o *getListOptions) addFlags(cmd *cobra.Command, plural string) {
	flags := cmd.Flags()
	flags.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "list the "+plural+" of all namespaces")
	flags.BoolVar(&o.noHeader, "no-header", false, "skip the header when printing the results")
	flags.BoolVarP(&o.watch, "watch", "w", false, "after listing the "+plural+", print a row for every change until --timeout")
	flags.StringVar(&o.statusSelector, "status-selector", "",
		"print only the "+plural+" whose condition has the given status, e.g. ready=false")
	flags.StringVarP(&o.labelSelector, "selector", "l", "", "label selector, e.g. app=podinfo")
	addOutputFlag(cmd, &o.output, outputWide, outputJSON, outputYAML)
}

// runGetList prints the objects of kind that args and the flags select,
// as a table or for scripts, or follows them with --watch. Like flux get,
// it says on standard error when there are none, and succeeds.
func runGetList[T any, P listedObject[T]](cmd *cobra.Command, env *environment, o getListOptions, args []string, kind listedKind[T, P]) error {
	format, err := parseOutputFormat(o.output, outputWide, outputJSON, outputYAML)
	if err != nil {
		return err
	}
	if o.watch && format.structured() {
		return fmt.Errorf("--watch prints rows: use it without -o %s", format)
	}
	scope, err := o.scope(env, args, kind.kind)
	if err != nil {
		return err
	}
	kube, err := env.newClient()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), env.timeout)
	defer cancel()

	printer := newRowPrinter(cmd.OutOrStdout(), o, format == outputWide, scope, kind)
	if o.watch {
		return printer.watch(ctx, kube, env.timeout)
	}
	items, err := kind.list(ctx, kube, scope.listOptions())
	if err != nil {
		return err
	}
	if len(items) == 0 {
		statusLog{cmd.ErrOrStderr()}.failuref("%s", scope.notFoundError())
	}
	if format.structured() {
		return printer.printStructured(items, format)
	}
	if len(items) == 0 {
		return nil
	}
	return printer.printTable(items)
}

func (o getListOptions) scope(env *environment, args []string, kind string) (objectScope, error) {
	scope := objectScope{kind: kind}
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

// objectScope is which objects of a kind a get command is about.
type objectScope struct {
	kind       string // Canary or CanaryGroup
	namespace  string // empty for all namespaces
	name       string // empty for all names
	labels     labels.Selector
	conditions *conditionSelector
}

func (s objectScope) listOptions() []client.ListOption {
	opts := []client.ListOption{client.MatchingLabelsSelector{Selector: s.labels}}
	if s.namespace != "" {
		opts = append(opts, client.InNamespace(s.namespace))
	}
	if s.name != "" {
		opts = append(opts, client.MatchingFields{"metadata.name": s.name})
	}
	return opts
}

// matches tells whether an object seen by a watch belongs to the scope: a
// watch may deliver more than was asked (a fake client ignores selectors).
func (s objectScope) matches(object client.Object) bool {
	return (s.namespace == "" || object.GetNamespace() == s.namespace) &&
		(s.name == "" || object.GetName() == s.name) &&
		s.labels.Matches(labels.Set(object.GetLabels()))
}

// notFoundError words an empty result the way flux does.
func (s objectScope) notFoundError() error {
	where := "any namespace"
	if s.namespace != "" {
		where = fmt.Sprintf("%q namespace", s.namespace)
	}
	if s.name != "" {
		return fmt.Errorf("%s object '%s' not found in %s", s.kind, s.name, where)
	}
	return fmt.Errorf("no %s objects found in %s", s.kind, where)
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
// matches every object, and an object without the condition matches none.
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

// titleBool prints a bool as flux does: True or False.
func titleBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// readyStatusAndMessage reads the Ready condition; without one the object
// has not been reconciled yet, which flux prints as False.
func readyStatusAndMessage(conditions []metav1.Condition) (status, message string) {
	if c := apimeta.FindStatusCondition(conditions, meta.ReadyCondition); c != nil {
		return string(c.Status), c.Message
	}
	return string(metav1.ConditionFalse), "waiting to be reconciled"
}

// sortObjects orders by namespace then name, as the API server lists them.
func sortObjects[T any, P listedObject[T]](items []T) {
	sort.SliceStable(items, func(i, j int) bool {
		a, b := P(&items[i]), P(&items[j])
		if a.GetNamespace() != b.GetNamespace() {
			return a.GetNamespace() < b.GetNamespace()
		}
		return a.GetName() < b.GetName()
	})
}
