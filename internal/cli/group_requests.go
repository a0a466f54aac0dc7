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
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/agentrequest"
)

// groupRequest is which members of a CanaryGroup `serin VERB --group`
// annotates: those in a phase in which the agent acts on the request. A
// member in another phase would keep the annotation pending, and the agent
// would act on it at the member's next rollout: a promote would skip the
// analysis of a revision nobody has seen yet.
type groupRequest struct {
	phases  []v1alpha1.CanaryPhase
	members string // which members, in words
}

// underWay are the phases in which the agent acts on promote and abort.
var underWay = []v1alpha1.CanaryPhase{v1alpha1.PhaseWaiting, v1alpha1.PhaseProgressing, v1alpha1.PhaseWaitingPromotion}

// groupRequests are the requests `--group` sends, by verb. Not revert: a
// member's revert is already the release's, one pull request that
// restores every member the revision changed, so `serin revert NAME` of
// any member reverts them all.
var groupRequests = map[string]groupRequest{
	"promote": {phases: underWay, members: "whose rollout is under way"},
	"abort":   {phases: underWay, members: "whose rollout is under way"},
	"retry":   {phases: []v1alpha1.CanaryPhase{v1alpha1.PhaseFailed}, members: "that failed"},
}

// nameOrGroup accepts a Canary's NAME, or no argument with --group.
func nameOrGroup(group *string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if *group == "" {
			return cobra.ExactArgs(1)(cmd, args)
		}
		if len(args) > 0 {
			return errors.New("give a Canary's NAME or --group GROUP, not both")
		}
		return nil
	}
}

// addGroupFlag adds --group, which completes with the namespace's
// CanaryGroups.
func addGroupFlag(cmd *cobra.Command, env *environment, group *string, usage string) {
	cmd.Flags().StringVar(group, "group", "", usage)
	_ = cmd.RegisterFlagCompletionFunc("group", namesCompletion(env, groupNames)) // fails only for a flag that does not exist
}

// runGroupRequest sends request to the members of a CanaryGroup it
// applies to, as runAgentRequest does to one Canary, with a line for each
// member.
func runGroupRequest(cmd *cobra.Command, env *environment, request agentrequest.Request, name string, noWait bool) error {
	s, err := env.open(cmd)
	if err != nil {
		return err
	}
	defer s.cancel()
	ctx, kube, namespace := s.ctx, s.kube, s.namespace
	log := statusLog{cmd.ErrOrStderr()}
	which := groupRequests[request.Verb]

	members, err := readGroupMembers(ctx, kube, client.ObjectKey{Namespace: namespace, Name: name}, log)
	if err != nil {
		return err
	}
	var targets []*v1alpha1.Canary
	for _, m := range members {
		if slices.Contains(which.phases, m.Status.Phase) {
			targets = append(targets, m)
		}
	}
	if len(targets) == 0 {
		return fmt.Errorf("no member of %s %s in %s namespace is one %s: the agent acts on a %s request in phase %s only",
			v1alpha1.CanaryGroupKind, name, namespace, which.members, request.Verb, joinPhases(which.phases))
	}
	if suspended := suspendedNames(targets); len(suspended) > 0 && !noWait {
		return fmt.Errorf("%s %s in %s namespace has suspended members (%s): run serin resume --group %s first, "+
			"or pass --no-wait to leave the requests for when they are resumed",
			v1alpha1.CanaryGroupKind, name, namespace, strings.Join(suspended, ", "), name)
	}

	log.actionf("annotating the members of %s %s in %s namespace %s", v1alpha1.CanaryGroupKind, name, namespace, which.members)
	at := env.now()
	var value string
	for _, m := range members {
		if !slices.Contains(targets, m) {
			log.notef("%s %s skipped: phase %s", v1alpha1.CanaryKind, m.Name, orNone(string(m.Status.Phase)))
			continue
		}
		if value, err = request.Send(ctx, kube, m, at); err != nil {
			return err
		}
		log.successf("%s %s annotated", v1alpha1.CanaryKind, m.Name)
	}
	if noWait {
		return nil
	}
	log.waitingf("waiting for serin to handle the %s request of each member", request.Verb)
	return waitForEach(ctx, env, kube, log, targets, memberWait{
		waitingFor: fmt.Sprintf("serin to handle the %s request", request.Verb),
		handled:    fmt.Sprintf("%s request handled", request.Verb),
		done:       func(c *v1alpha1.Canary) bool { return request.Handled(c, value) },
	})
}

// runGroup suspends or resumes every member of a CanaryGroup, as run does
// one Canary, with a line for each member.
func (s suspension) runGroup(cmd *cobra.Command, env *environment, name string, noWait bool) error {
	sess, err := env.open(cmd)
	if err != nil {
		return err
	}
	defer sess.cancel()
	ctx, kube, namespace := sess.ctx, sess.kube, sess.namespace
	log := statusLog{cmd.ErrOrStderr()}

	members, err := readGroupMembers(ctx, kube, client.ObjectKey{Namespace: namespace, Name: name}, log)
	if err != nil {
		return err
	}
	if len(members) == 0 {
		return fmt.Errorf("%s %s in %s namespace has no member Canary to %s", v1alpha1.CanaryGroupKind, name, namespace, s.verb)
	}
	log.actionf("%s the members of %s %s in %s namespace", s.doing, v1alpha1.CanaryGroupKind, name, namespace)
	requested := ""
	if !noWait {
		requested = env.now().UTC().Format(time.RFC3339Nano)
	}
	for _, m := range members {
		if err := patchSuspend(ctx, kube, m, s.suspend, requested); err != nil {
			return err
		}
		log.successf("%s %s %s", v1alpha1.CanaryKind, m.Name, s.done)
	}
	if noWait {
		return nil
	}
	log.waitingf("waiting for serin to handle the change of each member")
	return waitForEach(ctx, env, kube, log, members, memberWait{
		waitingFor: "serin to handle the change",
		handled:    "serin handled the change",
		done:       func(c *v1alpha1.Canary) bool { return c.Status.LastHandledReconcileAt == requested },
	})
}

// readGroupMembers reads a CanaryGroup's member Canaries, in the group's
// order. A member that is no Canary is reported and left out.
func readGroupMembers(ctx context.Context, kube client.Client, key client.ObjectKey, log statusLog) ([]*v1alpha1.Canary, error) {
	group, err := getGroup(ctx, kube, key)
	if err != nil {
		return nil, err
	}
	var members []*v1alpha1.Canary
	for _, m := range group.Spec.Members {
		canary := &v1alpha1.Canary{}
		err := kube.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: m.Name}, canary)
		switch {
		case apierrors.IsNotFound(err):
			log.warningf("%s %s lists %s, which is no %s in %s namespace: skipped",
				v1alpha1.CanaryGroupKind, key.Name, m.Name, v1alpha1.CanaryKind, key.Namespace)
			continue
		case err != nil:
			return nil, err
		}
		members = append(members, canary)
	}
	return members, nil
}

// memberWait is what waitForEach waits for of each member.
type memberWait struct {
	// waitingFor is what a timeout says was awaited; handled what the
	// line of a member says once done.
	waitingFor, handled string
	done                func(*v1alpha1.Canary) bool
}

// waitForEach waits until each member is done, one after the other, and
// prints a line for each.
func waitForEach(ctx context.Context, env *environment, kube client.Client, log statusLog, members []*v1alpha1.Canary, wait memberWait) error {
	for _, m := range members {
		got, err := waitForCanary(ctx, kube, client.ObjectKeyFromObject(m), env.pollInterval, wait.done)
		if err != nil {
			return waitError(err, env.timeout, wait.waitingFor+" of "+m.Name)
		}
		log.successf("%s: %s: %s", m.Name, wait.handled, progressSummary(got))
	}
	return nil
}

func suspendedNames(canaries []*v1alpha1.Canary) []string {
	var names []string
	for _, c := range canaries {
		if c.Spec.Suspend {
			names = append(names, c.Name)
		}
	}
	return names
}

func joinPhases(phases []v1alpha1.CanaryPhase) string {
	names := make([]string, len(phases))
	for i, p := range phases {
		names[i] = string(p)
	}
	return strings.Join(names, ", ")
}
