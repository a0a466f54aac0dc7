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
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/canarywatch"
)

func newGetGroupsCommand(env *environment) *cobra.Command {
	var opts getListOptions
	cmd := &cobra.Command{
		Use:     "groups [NAME]",
		Aliases: []string{"canarygroups", "cg"},
		Short:   "List CanaryGroups and their releases",
		Long: `List CanaryGroups with the revision of their current (or last) release, its
phase, where each member of the release stands, and readiness, laid out like
serin get canaries.`,
		Example: `  # The CanaryGroups of the current namespace
  serin get groups

  # Every group whose release is not ready, in all namespaces
  serin get groups -A --status-selector ready=false

  # Follow one group's release
  serin get groups storefront -n apps --watch`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: groupNameCompletion(env),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runGetList(cmd, env, opts, args, groupKind)
		},
	}
	opts.addFlags(cmd, "CanaryGroups")
	return cmd
}

// groupKind is how `serin get groups` lists and prints CanaryGroups.
var groupKind = listedKind[v1alpha1.CanaryGroup, *v1alpha1.CanaryGroup]{
	kind:   v1alpha1.CanaryGroupKind,
	header: groupHeader,
	row:    groupRow,
	widen:  widenForReleaseWave,
	summarize: func(group *v1alpha1.CanaryGroup) any {
		return summarizeGroup(group)
	},
	list: func(ctx context.Context, kube client.Client, opts []client.ListOption) ([]v1alpha1.CanaryGroup, error) {
		list := &v1alpha1.CanaryGroupList{}
		err := kube.List(ctx, list, opts...)
		return list.Items, err
	},
	follow: func(ctx context.Context, kube client.WithWatch, opts []client.ListOption,
		listed func([]v1alpha1.CanaryGroup) error, changed func(*v1alpha1.CanaryGroup, bool) error) error {
		return canarywatch.FollowGroups(ctx, kube, opts, canarywatch.Funcs[v1alpha1.CanaryGroup]{Listed: listed, Changed: changed})
	},
}

// groupHeader is the header of `serin get groups`.
func groupHeader(layout tableLayout) []string {
	header := []string{"NAME", "REVISION", "PHASE", "MEMBERS", "READY"}
	if layout.wide {
		header = append(header, "DECIDED BY")
	}
	if layout.wave {
		header = append(header, "WAVE")
	}
	header = append(header, "MESSAGE")
	if layout.namespace {
		header = append([]string{"NAMESPACE"}, header...)
	}
	return header
}

// groupRow summarises a CanaryGroup in the columns of groupHeader.
func groupRow(group *v1alpha1.CanaryGroup, layout tableLayout, colors palette) []string {
	s := groupCells(group)
	row := []string{
		s.Name,
		layout.cell(s.Revision),
		colors.phase(group.Status.Phase),
		membersCell(group, colors),
		colors.conditionStatus(s.Ready),
	}
	if layout.wide {
		decidedBy := s.DecidedBy
		if decidedBy == "" {
			decidedBy = "-"
		}
		row = append(row, decidedBy)
	}
	if layout.wave {
		row = append(row, releaseWaveCell(group, colors))
	}
	row = append(row, layout.cell(s.Message))
	if layout.namespace {
		row = append([]string{group.Namespace}, row...)
	}
	return row
}

// membersCell says where each member of the release stands, name:phase,
// with the steps a member passed while its part of a release under way
// goes on: "api:Succeeded web:Progressing(2)". Before the first release
// it lists the members' names.
func membersCell(group *v1alpha1.CanaryGroup, colors palette) string {
	release := group.Status.Release
	if release == nil {
		names := make([]string, len(group.Spec.Members))
		for i, m := range group.Spec.Members {
			names[i] = m.Name
		}
		return strings.Join(names, " ")
	}
	cells := make([]string, len(release.Members))
	for i, m := range release.Members {
		cell := m.Name + ":" + colors.phase(m.Phase)
		if release.Phase == v1alpha1.PhaseProgressing && !settledPhase(m.Phase) {
			cell += fmt.Sprintf("(%d)", m.StepsPassed)
		}
		cells[i] = cell
	}
	return strings.Join(cells, " ")
}

// settledPhase tells whether a Canary's phase is a rollout's outcome
// (or that none ran), not a step of one.
func settledPhase(phase v1alpha1.CanaryPhase) bool {
	switch phase {
	case "", v1alpha1.PhaseInitialized, v1alpha1.PhaseSucceeded, v1alpha1.PhaseFailed, v1alpha1.PhaseHalted:
		return true
	}
	return false
}

// widenForReleaseWave adds the WAVE column for a group whose release
// promotes to next stages (status.release.stages).
func widenForReleaseWave(layout tableLayout, group *v1alpha1.CanaryGroup) tableLayout {
	if rel := group.Status.Release; rel != nil && len(rel.Stages) > 0 {
		layout.wave = true
	}
	return layout
}

// releaseWaveCell says where the release stands in each next stage, as
// the WAVE column of serin get canaries does: "production: Succeeded";
// "-" when it promotes to none.
func releaseWaveCell(group *v1alpha1.CanaryGroup, colors palette) string {
	rel := group.Status.Release
	if rel == nil || len(rel.Stages) == 0 {
		return "-"
	}
	cells := make([]string, len(rel.Stages))
	for i, st := range rel.Stages {
		cells[i] = st.Stage + ": " + colors.wavePhase(st.Phase)
	}
	return strings.Join(cells, ", ")
}
