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
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/canarywatch"
)

func newGetCommand(env *environment) *cobra.Command {
	get := &cobra.Command{
		Use:   "get",
		Short: "Print the status of Canaries and CanaryGroups",
		Long:  "The get sub-commands print the status of Canaries and CanaryGroups, as flux get does for Flux objects.",
	}
	get.AddCommand(newGetCanariesCommand(env), newGetCanaryCommand(env),
		newGetGroupsCommand(env), newGetGroupCommand(env))
	return get
}

func newGetCanariesCommand(env *environment) *cobra.Command {
	var opts getListOptions
	cmd := &cobra.Command{
		Use:     "canaries [NAME]",
		Aliases: []string{"cn"},
		Short:   "List Canaries and their status",
		Long: `List Canaries with their group, revision, phase, canary weight, suspension
and readiness, laid out like flux get kustomizations. When one of them has
stages to promote to (spec.gitops.promote), a WAVE column says where its
promoted revision stands in each.`,
		Example: `  # The Canaries of the current namespace
  serin get canaries

  # Every Canary that is not ready, in all namespaces
  serin get canaries -A --status-selector ready=false

  # Follow one Canary's rollout
  serin get canaries podinfo -n apps --watch

  # The phase of every Canary, for a script
  serin get canaries -A -o json | jq -r '.items[] | "\(.namespace)/\(.name) \(.phase)"'`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: canaryNameCompletion(env),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runGetList(cmd, env, opts, args, canaryKind)
		},
	}
	opts.addFlags(cmd, "Canaries")
	return cmd
}

// canaryKind is how `serin get canaries` lists and prints Canaries.
var canaryKind = listedKind[v1alpha1.Canary, *v1alpha1.Canary]{
	kind:   v1alpha1.CanaryKind,
	header: canaryHeader,
	row:    canaryRow,
	widen:  widenForWave,
	summarize: func(canary *v1alpha1.Canary) any {
		return summarizeCanary(canary)
	},
	list: func(ctx context.Context, kube client.Client, opts []client.ListOption) ([]v1alpha1.Canary, error) {
		list := &v1alpha1.CanaryList{}
		err := kube.List(ctx, list, opts...)
		return list.Items, err
	},
	follow: func(ctx context.Context, kube client.WithWatch, opts []client.ListOption,
		listed func([]v1alpha1.Canary) error, changed func(*v1alpha1.Canary, bool) error) error {
		return canarywatch.Follow(ctx, kube, opts, canarywatch.Funcs[v1alpha1.Canary]{Listed: listed, Changed: changed})
	},
}

// canaryHeader is the header of `serin get canaries`.
func canaryHeader(layout tableLayout) []string {
	header := []string{"NAME", "GROUP", "REVISION"}
	if layout.wide {
		header = append(header, "PROMOTED")
	}
	header = append(header, "PHASE", "WEIGHT")
	if layout.wide {
		header = append(header, "FAILED CHECKS")
	}
	header = append(header, "SUSPENDED", "READY")
	if layout.wave {
		header = append(header, "WAVE")
	}
	header = append(header, "MESSAGE")
	if layout.namespace {
		header = append([]string{"NAMESPACE"}, header...)
	}
	return header
}

// canaryRow summarises a Canary in the columns of canaryHeader.
func canaryRow(canary *v1alpha1.Canary, layout tableLayout, colors palette) []string {
	s := canaryCells(canary)
	group := s.Group
	if group == "" {
		group = "-"
	}
	row := []string{s.Name, group, layout.cell(s.Revision)}
	if layout.wide {
		row = append(row, layout.cell(s.PromotedRevision))
	}
	row = append(row, colors.phase(canary.Status.Phase), strconv.Itoa(s.Weight))
	if layout.wide {
		row = append(row, fmt.Sprintf("%d/%d", s.FailedChecks, s.Threshold))
	}
	row = append(row, titleBool(s.Suspended), colors.conditionStatus(s.Ready))
	if layout.wave {
		row = append(row, waveCell(canary, colors))
	}
	row = append(row, layout.cell(s.Message))
	if layout.namespace {
		row = append([]string{s.Namespace}, row...)
	}
	return row
}

// widenForWave adds the WAVE column for a Canary with stages to promote
// to, or with the status of a wave still recorded.
func widenForWave(layout tableLayout, canary *v1alpha1.Canary) tableLayout {
	if len(stagesOf(canary)) > 0 || len(canary.Status.Promotions) > 0 {
		layout.wave = true
	}
	return layout
}

// waveCell says where the promoted revision stands in each stage of the
// wave (status.promotions): "staging: Succeeded, production: Soaking";
// "-" before the first promotion.
func waveCell(canary *v1alpha1.Canary, colors palette) string {
	if len(canary.Status.Promotions) == 0 {
		return "-"
	}
	cells := make([]string, len(canary.Status.Promotions))
	for i, p := range canary.Status.Promotions {
		cells[i] = p.Stage + ": " + colors.wavePhase(p.Phase)
	}
	return strings.Join(cells, ", ")
}
