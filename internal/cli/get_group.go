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
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
)

func newGetGroupCommand(env *environment) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:     "group NAME",
		Aliases: []string{"canarygroup"},
		Short:   "Show a CanaryGroup's release, its members side by side",
		Long: `Show one CanaryGroup: its members and what they depend on, the current (or
last) release with each member's phase, weight, passed steps and message side
by side, what a member holds or waits for, the verdict (the member that
decided it, the message, the revert), the earlier releases, the conditions
and the latest Events.`,
		Example: `  serin get group storefront -n apps
  serin get group storefront -n apps -o yaml`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: groupNameCompletion(env),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runGetGroup(cmd, env, args[0], output)
		},
	}
	addOutputFlag(cmd, &output, outputJSON, outputYAML)
	return cmd
}

func runGetGroup(cmd *cobra.Command, env *environment, name, output string) error {
	format, err := parseOutputFormat(output, outputJSON, outputYAML)
	if err != nil {
		return err
	}
	s, err := env.open(cmd)
	if err != nil {
		return err
	}
	defer s.cancel()
	ctx, kube, namespace := s.ctx, s.kube, s.namespace

	group, err := getGroup(ctx, kube, client.ObjectKey{Namespace: namespace, Name: name})
	if err != nil {
		return err
	}
	if format.structured() {
		return writeStructured(cmd.OutOrStdout(), format, summarizeGroup(group))
	}
	states, err := memberGroupStates(ctx, kube, group)
	if err != nil {
		return err
	}
	events, eventsErr := recentEvents(ctx, kube, v1alpha1.CanaryGroupKind, group)
	description := groupDescription{
		group:     group,
		states:    states,
		events:    events,
		eventsErr: eventsErr,
		now:       env.now(),
		colors:    paletteFor(cmd.OutOrStdout()),
	}
	return description.write(cmd.OutOrStdout())
}

// getGroup reads a CanaryGroup, with flux's wording when it does not exist.
func getGroup(ctx context.Context, kube client.Client, key client.ObjectKey) (*v1alpha1.CanaryGroup, error) {
	group := &v1alpha1.CanaryGroup{}
	if err := kube.Get(ctx, key, group); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, objectScope{kind: v1alpha1.CanaryGroupKind, namespace: key.Namespace, name: key.Name}.notFoundError()
		}
		return nil, err
	}
	return group, nil
}

// memberGroupStates reads, of each member of the group's current release,
// its place in the release (status.group): what it holds, waits for, or
// was rolled back by. A member Canary that is gone has none.
func memberGroupStates(ctx context.Context, kube client.Client, group *v1alpha1.CanaryGroup) (map[string]*v1alpha1.GroupStatus, error) {
	states := map[string]*v1alpha1.GroupStatus{}
	release := group.Status.Release
	if release == nil {
		return states, nil
	}
	for _, m := range release.Members {
		canary := &v1alpha1.Canary{}
		err := kube.Get(ctx, client.ObjectKey{Namespace: group.Namespace, Name: m.Name}, canary)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return nil, err
		}
		if st := canary.Status.Group; st != nil && st.Name == group.Name && st.Release == release.Revision {
			states[m.Name] = st
		}
	}
	return states, nil
}

// groupDescription is the text of `serin get group NAME`.
type groupDescription struct {
	group     *v1alpha1.CanaryGroup
	states    map[string]*v1alpha1.GroupStatus
	events    []corev1.Event
	eventsErr error
	now       time.Time
	colors    palette
}

func (d groupDescription) write(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	d.writeSummary(tw)
	d.writeRelease(tw)
	d.writeHistory(tw)
	writeConditions(tw, d.group.Status.Conditions, d.now)
	writeEvents(tw, d.events, d.eventsErr, d.now)
	return tw.Flush()
}

func (d groupDescription) writeSummary(w io.Writer) {
	g := d.group
	members := make([]string, len(g.Spec.Members))
	for i, m := range g.Spec.Members {
		members[i] = m.Name
		if len(m.DependsOn) > 0 {
			members[i] += " (after " + strings.Join(m.DependsOn, ", ") + ")"
		}
	}
	ready, message := readyStatusAndMessage(g.Status.Conditions)
	fmt.Fprintf(w, "Name:\t%s\n", g.Name)
	fmt.Fprintf(w, "Namespace:\t%s\n", g.Namespace)
	fmt.Fprintf(w, "Members:\t%s\n", strings.Join(members, ", "))
	fmt.Fprintf(w, "Window:\t%s\n", g.GetWindow())
	fmt.Fprintf(w, "Phase:\t%s\n", orNone(d.colors.phase(g.Status.Phase)))
	fmt.Fprintf(w, "Ready:\t%s\n", joinNonEmpty(": ", d.colors.conditionStatus(ready), message))
}

// writeRelease shows the current release: its verdict, then its members
// side by side.
func (d groupDescription) writeRelease(w io.Writer) {
	release := d.group.Status.Release
	if release == nil {
		fmt.Fprintf(w, "\nRelease:\t<none> (no member has changed since the group was created)\n")
		return
	}
	fmt.Fprintf(w, "\nRelease:\n")
	fmt.Fprintf(w, "  Revision:\t%s\n", release.Revision)
	fmt.Fprintf(w, "  Phase:\t%s\n", d.colors.phase(release.Phase))
	fmt.Fprintf(w, "  Started:\t%s\n", d.when(release.StartedAt, "<unknown>"))
	fmt.Fprintf(w, "  Finished:\t%s\n", d.when(release.FinishedAt, "<none> (under way)"))
	for _, line := range [][2]string{{"Decided by", release.DecidedBy}, {"Message", release.Message}, {"Revert", release.RevertURL}} {
		if line[1] != "" {
			fmt.Fprintf(w, "  %s:\t%s\n", line[0], line[1])
		}
	}
	if satOut := d.satOut(); len(satOut) > 0 {
		fmt.Fprintf(w, "  Sat out:\t%s (not changed by this revision)\n", strings.Join(satOut, ", "))
	}
	// A line without a cell, so that the table's columns are its own.
	fmt.Fprintf(w, "  Members:\n")
	fmt.Fprintf(w, "    NAME\tPHASE\tWEIGHT\tSTEPS PASSED\tIN THE GROUP\tMESSAGE\n")
	for _, m := range release.Members {
		fmt.Fprintf(w, "    %s\t%s\t%d%%\t%d\t%s\t%s\n", m.Name, orNone(string(m.Phase)), m.Weight, m.StepsPassed,
			describeGroupState(d.states[m.Name]), m.Message)
	}
	d.writeReleaseStages(w, release.Stages)
}

// writeReleaseStages shows the release's promotions to the next stages:
// one per stage, written by one member for the others, and its verdict.
func (d groupDescription) writeReleaseStages(w io.Writer, stages []v1alpha1.GroupReleaseStage) {
	if len(stages) == 0 {
		return
	}
	fmt.Fprintf(w, "  Wave:\n")
	fmt.Fprintf(w, "    STAGE\tPHASE\tMEMBERS\tWRITTEN BY\tPULL REQUEST\tMESSAGE\n")
	for _, st := range stages {
		fmt.Fprintf(w, "    %s\t%s\t%s\t%s\t%s\t%s\n", st.Stage, d.colors.wavePhase(st.Phase), strings.Join(st.Members, ", "),
			st.WrittenBy, orNone(st.PullRequestURL), st.Message)
	}
}

// satOut names the members the current release did not change.
func (d groupDescription) satOut() []string {
	var names []string
	for _, m := range d.group.Spec.Members {
		if !slices.ContainsFunc(d.group.Status.Release.Members, func(r v1alpha1.GroupReleaseMember) bool { return r.Name == m.Name }) {
			names = append(names, m.Name)
		}
	}
	return names
}

// describeGroupState says what a member holds, waits for, or was rolled
// back by; "-" when nothing.
func describeGroupState(st *v1alpha1.GroupStatus) string {
	if st == nil {
		return "-"
	}
	var parts []string
	switch st.Holding {
	case v1alpha1.HoldingStep:
		parts = append(parts, "holds its step for the others")
	case v1alpha1.HoldingPromotion:
		parts = append(parts, "holds its promotion for the others")
	}
	if len(st.WaitingFor) > 0 {
		parts = append(parts, "waits for "+strings.Join(st.WaitingFor, ", "))
	}
	if st.FailedBy != "" {
		parts = append(parts, "rolled back: "+st.FailedBy+" failed")
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, "; ")
}

// writeHistory lists the earlier releases, newest first.
func (d groupDescription) writeHistory(w io.Writer) {
	history := d.group.Status.History
	if len(history) == 0 {
		fmt.Fprintf(w, "\nHistory:\t<none>\n")
		return
	}
	fmt.Fprintf(w, "\nHistory:\n")
	fmt.Fprintf(w, "  REVISION\tPHASE\tMEMBERS\tFINISHED\tDECIDED BY\tREVERT\tMESSAGE\n")
	for _, r := range history {
		finished := "-"
		if r.FinishedAt != nil {
			finished = ageAt(d.now, r.FinishedAt.Time)
		}
		fmt.Fprintf(w, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\n", shortenHashes(r.Revision), orNone(string(r.Phase)),
			strconv.Itoa(len(r.Members)), finished, orDash(r.DecidedBy), orDash(r.RevertURL), shortenHashes(r.Message))
	}
}

// when is "5m ago (2026-05-04T09:55:00Z)", or none when t is not set.
func (d groupDescription) when(t *metav1.Time, none string) string {
	if t == nil {
		return none
	}
	return fmt.Sprintf("%s ago (%s)", ageAt(d.now, t.Time), t.UTC().Format(time.RFC3339))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
