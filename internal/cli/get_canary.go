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
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// maxDescribedEvents is how many of an object's latest Events are shown.
const maxDescribedEvents = 10

func newGetCanaryCommand(env *environment) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "canary NAME",
		Short: "Show a Canary's analysis at a glance",
		Long: `Show one Canary: its phase, weight and analysis step, failed checks against
the threshold, metrics and webhooks, revisions, GitOps revert, the wave of
its promoted revision through the next stages, conditions and latest Events.`,
		Example: `  serin get canary podinfo -n apps

  # The summary of serin get canaries and the Canary, as JSON
  serin get canary podinfo -n apps -o json`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: canaryNameCompletion(env),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runGetCanary(cmd, env, args[0], output)
		},
	}
	addOutputFlag(cmd, &output, outputJSON, outputYAML)
	return cmd
}

func runGetCanary(cmd *cobra.Command, env *environment, name, output string) error {
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

	canary := &v1alpha1.Canary{}
	if err := kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, canary); err != nil {
		if apierrors.IsNotFound(err) {
			return objectScope{kind: v1alpha1.CanaryKind, namespace: namespace, name: name}.notFoundError()
		}
		return err
	}
	if format.structured() {
		return writeStructured(cmd.OutOrStdout(), format, summarizeCanary(canary))
	}
	events, eventsErr := recentEvents(ctx, kube, v1alpha1.CanaryKind, canary)
	description := canaryDescription{
		canary:    canary,
		events:    events,
		eventsErr: eventsErr,
		now:       env.now(),
		colors:    paletteFor(cmd.OutOrStdout()),
	}
	return description.write(cmd.OutOrStdout())
}

// recentEvents returns the latest Events involving the object of kind,
// oldest first.
func recentEvents(ctx context.Context, kube client.Client, kind string, object client.Object) ([]corev1.Event, error) {
	events, err := objectEvents(ctx, kube, kind, object)
	if len(events) > maxDescribedEvents {
		events = events[len(events)-maxDescribedEvents:]
	}
	return events, err
}

// objectEvents returns every Event involving the object of kind, oldest
// first.
func objectEvents(ctx context.Context, kube client.Client, kind string, object client.Object) ([]corev1.Event, error) {
	list := &corev1.EventList{}
	err := kube.List(ctx, list, client.InNamespace(object.GetNamespace()), client.MatchingFields{
		"involvedObject.kind": kind,
		"involvedObject.name": object.GetName(),
	})
	if err != nil {
		return nil, err
	}
	var events []corev1.Event
	for _, event := range list.Items {
		// Events of an earlier object of the same name are not this one's.
		if event.InvolvedObject.UID == "" || object.GetUID() == "" || event.InvolvedObject.UID == object.GetUID() {
			events = append(events, event)
		}
	}
	sort.SliceStable(events, func(i, j int) bool {
		return eventLastSeen(&events[i]).Before(eventLastSeen(&events[j]))
	})
	return events, nil
}

// eventLastSeen is when an Event last happened, whichever API wrote it.
func eventLastSeen(event *corev1.Event) time.Time {
	switch {
	case event.Series != nil && !event.Series.LastObservedTime.IsZero():
		return event.Series.LastObservedTime.Time
	case !event.LastTimestamp.IsZero():
		return event.LastTimestamp.Time
	case !event.EventTime.IsZero():
		return event.EventTime.Time
	case !event.FirstTimestamp.IsZero():
		return event.FirstTimestamp.Time
	}
	return event.CreationTimestamp.Time
}

// canaryDescription is the text of `serin get canary NAME`.
type canaryDescription struct {
	canary    *v1alpha1.Canary
	events    []corev1.Event
	eventsErr error
	now       time.Time
	colors    palette
}

func (d canaryDescription) write(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	d.writeSummary(tw)
	d.writeProgress(tw)
	d.writeChecks(tw)
	d.writeAnalysis(tw)
	d.writeRevert(tw)
	d.writeWave(tw)
	d.writeConditions(tw)
	d.writeEvents(tw)
	return tw.Flush()
}

func (d canaryDescription) writeSummary(w io.Writer) {
	c := d.canary
	ready, message := readyStatusAndMessage(c.Status.Conditions)
	fmt.Fprintf(w, "Name:\t%s\n", c.Name)
	fmt.Fprintf(w, "Namespace:\t%s\n", c.Namespace)
	fmt.Fprintf(w, "Target:\t%s/%s\n", c.Spec.TargetRef.Kind, c.Spec.TargetRef.Name)
	fmt.Fprintf(w, "Routing:\t%s\n", describeRouting(c))
	fmt.Fprintf(w, "Suspended:\t%s\n", titleBool(c.Spec.Suspend))
	fmt.Fprintf(w, "Ready:\t%s\n", joinNonEmpty(": ", d.colors.conditionStatus(ready), message))
}

func describeRouting(c *v1alpha1.Canary) string {
	provider := string(c.GetRoutingProvider())
	var gateways []string
	for _, ref := range c.Spec.Routing.GatewayRefs {
		gateway := ref.Name
		if ref.Namespace != "" {
			gateway = ref.Namespace + "/" + ref.Name
		}
		if ref.GetKind() == v1alpha1.ServiceParent {
			gateway = "service " + gateway
		}
		if ref.Port != nil {
			gateway += fmt.Sprintf(":%d", *ref.Port)
		}
		if ref.SectionName != "" {
			gateway += " (" + ref.SectionName + ")"
		}
		gateways = append(gateways, gateway)
	}
	if len(gateways) > 0 {
		provider += " via " + strings.Join(gateways, ", ")
	}
	if len(c.Spec.Routing.Hosts) > 0 {
		provider += " for " + strings.Join(c.Spec.Routing.Hosts, ", ")
	}
	var routes []string
	for _, ref := range c.Spec.Routing.RouteRefs {
		routes = append(routes, strings.ToLower(ref.GetKind())+" "+ref.Name)
	}
	if len(routes) > 0 {
		provider += " on your " + strings.Join(routes, ", ")
	}
	return provider
}

// writeProgress shows where the rollout stands: phase, weight and step,
// failed checks against the threshold.
func (d canaryDescription) writeProgress(w io.Writer) {
	c := d.canary
	fmt.Fprintf(w, "Phase:\t%s\n", orNone(d.colors.phase(c.Status.Phase)))
	if c.Spec.SkipAnalysis {
		fmt.Fprintf(w, "Analysis:\tskipped (spec.skipAnalysis): every revision is promoted at once\n")
		d.writeRevisions(w)
		return
	}
	switch {
	case c.IsABTest():
		fmt.Fprintf(w, "Traffic:\t%s\n", abTestTraffic(c))
		fmt.Fprintf(w, "Iterations:\t%d of %d\n", c.Status.Iterations, c.GetIterations())
	case c.IsBlueGreen():
		fmt.Fprintf(w, "Traffic:\t%s\n", blueGreenTraffic(c.Status.CanaryWeight))
		fmt.Fprintf(w, "Iterations:\t%d of %d\n", c.Status.Iterations, c.GetIterations())
	default:
		fmt.Fprintf(w, "Weight:\t%s\n", describeWeight(c))
	}
	fmt.Fprintf(w, "Failed checks:\t%d of %d allowed\n", c.Status.FailedChecks, c.GetThreshold())
	fmt.Fprintf(w, "Interval:\t%s\n", c.GetAnalysisInterval())
	if t := c.Status.LastTransitionTime; t != nil {
		fmt.Fprintf(w, "Last transition:\t%s ago (%s)\n", d.age(t.Time), t.UTC().Format(time.RFC3339))
	}
	d.writeRevisions(w)
}

func (d canaryDescription) writeRevisions(w io.Writer) {
	fmt.Fprintf(w, "Revision:\t%s\n", orNone(d.canary.Status.LastAttemptedRevision))
	fmt.Fprintf(w, "Promoted revision:\t%s\n", orNone(d.canary.Status.LastPromotedRevision))
}

func blueGreenTraffic(canaryWeight int) string {
	if canaryWeight > 0 {
		return "canary (blue/green)"
	}
	return "primary (blue/green)"
}

// abTestTraffic tells who an A/B test sends to the canary: the requests
// analysis.match selects while the test runs, nobody before.
func abTestTraffic(c *v1alpha1.Canary) string {
	if c.Status.CanaryWeight == 0 {
		return "primary: every request (A/B test: the requests analysis.match selects are not routed to the canary yet)"
	}
	return "canary: the requests analysis.match selects; primary: every other request (A/B test)"
}

// describeWeight shows the canary weight and which of the steps it is at.
func describeWeight(c *v1alpha1.Canary) string {
	weight := c.Status.CanaryWeight
	steps := c.GetStepWeights()
	stepTexts := make([]string, len(steps))
	at := -1
	for i, step := range steps {
		stepTexts[i] = strconv.Itoa(step)
		if step == weight {
			at = i
		}
	}
	plan := strings.Join(stepTexts, ", ")
	switch {
	case weight == 0:
		return fmt.Sprintf("0%% (no traffic to the canary; steps %s)", plan)
	case at >= 0:
		return fmt.Sprintf("%d%% (step %d of %d: %s)", weight, at+1, len(steps), plan)
	}
	return fmt.Sprintf("%d%% (steps %s)", weight, plan)
}

func (d canaryDescription) age(t time.Time) string { return ageAt(d.now, t) }

// ageAt is how long before now t was, as kubectl prints ages.
func ageAt(now, t time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t))
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func joinNonEmpty(separator string, parts ...string) string {
	var kept []string
	for _, part := range parts {
		if part != "" {
			kept = append(kept, part)
		}
	}
	return strings.Join(kept, separator)
}
