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
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/agentrequest"
)

// `serin promote NAME --to STAGE` writes the Canary's promoted revision to
// a stage of its wave (spec.gitops.promote) now: the agent skips the
// stage's soak, or tries a Stopped or Error stage again. It sets
// serin.dev/promote-to to STAGE@TOKEN, the token the time as in the other
// requests, and waits for status.handledRequests.promoteTo to hold it.

// promoteToHelp is what --to adds to the help of `serin promote`.
const promoteToHelp = `

With --to STAGE, it writes the promoted revision to STAGE, one of the
next stages of the Canary's wave (spec.gitops.promote), now: without the
rest of the stage's soak, and again after the stage Stopped or ended in
Error. It sets the annotation ` + v1alpha1.PromoteToRequestAnnotation + ` to STAGE@TIME
instead, and waits until the agent records that value in
status.handledRequests.promoteTo. The agent writes promotions of a
Succeeded Canary only.`

// errToWithGroup refuses --to with --group: a wave is one Canary's.
var errToWithGroup = errors.New("--to promotes one Canary's revision to a stage of its wave: give the Canary's NAME, not --group")

// isPromote tells whether request is `serin promote`, the one that takes
// --to.
func isPromote(request agentrequest.Request) bool {
	return request.Annotation == v1alpha1.PromoteRequestAnnotation
}

// addToFlag adds --to, which completes with the stages of the Canary
// named by the argument.
func addToFlag(cmd *cobra.Command, env *environment, stage *string) {
	cmd.Flags().StringVar(stage, "to", "",
		"write the promoted revision to this stage of the Canary's wave (spec.gitops.promote) now, without its soak")
	_ = cmd.RegisterFlagCompletionFunc("to", stageCompletion(env)) // fails only for a flag that does not exist
}

// stageCompletion completes --to with the stages of the Canary named by
// the first argument, each described by where it stands.
func stageCompletion(env *environment) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) == 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		namespace, err := env.namespace()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		kube, err := env.newClient()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
		defer cancel()
		canary, err := getCanary(ctx, kube, types.NamespacedName{Namespace: namespace, Name: args[0]})
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		var stages []string
		for _, stage := range stagesOf(canary) {
			if !strings.HasPrefix(stage.Stage, toComplete) {
				continue
			}
			if p := promotionOf(canary, stage.Stage); p != nil && p.Phase != "" {
				stages = append(stages, stage.Stage+"\t"+p.Phase)
				continue
			}
			stages = append(stages, stage.Stage)
		}
		return stages, cobra.ShellCompDirectiveNoFileComp
	}
}

// runPromoteTo asks the agent to write the Canary's promoted revision to
// stage now, as runAgentRequest does for the other requests.
func runPromoteTo(cmd *cobra.Command, env *environment, name, stage string, noWait bool) error {
	s, err := env.open(cmd)
	if err != nil {
		return err
	}
	defer s.cancel()
	ctx, kube, namespace := s.ctx, s.kube, s.namespace
	log := statusLog{cmd.ErrOrStderr()}
	key := types.NamespacedName{Namespace: namespace, Name: name}

	canary, err := getCanary(ctx, kube, key)
	if err != nil {
		return err
	}
	if err := checkPromoteTo(canary, stage, noWait); err != nil {
		return err
	}

	log.actionf("annotating %s %s in %s namespace", v1alpha1.CanaryKind, name, namespace)
	value := promoteToValue(stage, env.now())
	if err := sendPromoteTo(ctx, kube, canary, value); err != nil {
		return err
	}
	log.successf("%s annotated", v1alpha1.CanaryKind)
	if noWait {
		return nil
	}

	waitingFor := fmt.Sprintf("serin to handle the promote request to %s", stage)
	log.waitingf("waiting for %s", waitingFor)
	handled, err := waitForCanary(ctx, kube, key, env.pollInterval, func(c *v1alpha1.Canary) bool {
		return c.Status.HandledRequests.PromoteTo == value
	})
	if err != nil {
		return waitError(err, env.timeout, waitingFor)
	}
	log.successf("promote request to %s handled: %s", stage, stageSummary(handled, stage))
	return nil
}

// checkPromoteTo refuses a request the agent would not act on: a stage
// the Canary does not list, a Canary without a promoted revision to
// write, or, unless noWait, a suspended Canary or one that is not
// Succeeded, on which waiting would only run into the timeout. A request
// left on a Canary that is not Succeeded would skip the soak of the next
// revision it promotes, so that is refused even with noWait.
func checkPromoteTo(canary *v1alpha1.Canary, stage string, noWait bool) error {
	scope := fmt.Sprintf("%s %s in %s namespace", v1alpha1.CanaryKind, canary.Name, canary.Namespace)
	names := stageNames(canary)
	switch {
	case len(names) == 0:
		return fmt.Errorf("%s has no stage to promote to: its spec.gitops.promote is empty", scope)
	case !slices.Contains(names, stage):
		return fmt.Errorf("%s has no stage %q: its stages (spec.gitops.promote) are %s", scope, stage, strings.Join(names, ", "))
	case canary.Spec.Suspend && !noWait:
		return fmt.Errorf("%s is suspended: run serin resume first, "+
			"or pass --no-wait to leave the request for when it is resumed", scope)
	case canary.Status.LastPromotedRevision == "":
		return fmt.Errorf("%s has promoted no revision yet: there is nothing to write to %s", scope, stage)
	case canary.Status.Phase != v1alpha1.PhaseSucceeded:
		return fmt.Errorf("%s is in phase %s: the agent writes a revision to the next stages once the Canary is %s, "+
			"and a request left now would skip the soak of the next revision it promotes", scope, orNone(string(canary.Status.Phase)), v1alpha1.PhaseSucceeded)
	}
	return nil
}

// promoteToValue is the serin.dev/promote-to value that asks for stage at
// the time at: STAGE@TIME, the time in the other requests' format.
func promoteToValue(stage string, at time.Time) string {
	return stage + "@" + agentrequest.Value(at)
}

// sendPromoteTo sets serin.dev/promote-to to value with a JSON merge
// patch, leaving the other annotations alone.
func sendPromoteTo(ctx context.Context, kube client.Client, canary *v1alpha1.Canary, value string) error {
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"annotations": map[string]string{v1alpha1.PromoteToRequestAnnotation: value}},
	})
	if err != nil {
		return err
	}
	if err := kube.Patch(ctx, canary, client.RawPatch(types.MergePatchType, patch), fieldOwner); err != nil {
		return fmt.Errorf("requesting the promotion of %s %s/%s to a stage: %w", v1alpha1.CanaryKind, canary.Namespace, canary.Name, err)
	}
	return nil
}

// stageSummary says where a stage stands in a few words: "Promoting,
// revision main@sha1:89abcdef: promoted by hand: writing it to Git".
func stageSummary(canary *v1alpha1.Canary, stage string) string {
	p := promotionOf(canary, stage)
	if p == nil {
		return "the stage has no status yet"
	}
	return joinNonEmpty(": ", joinNonEmpty(", revision ", orNone(p.Phase), shortenHashes(p.Revision)), shortenHashes(p.Message))
}

// stagesOf are the next stages of the Canary's wave (spec.gitops.promote).
func stagesOf(canary *v1alpha1.Canary) []v1alpha1.PromotionTarget {
	if canary.Spec.GitOps == nil {
		return nil
	}
	return canary.Spec.GitOps.Promote
}

// stageNames are the names of the Canary's stages, in its order.
func stageNames(canary *v1alpha1.Canary) []string {
	stages := stagesOf(canary)
	names := make([]string, len(stages))
	for i, stage := range stages {
		names[i] = stage.Stage
	}
	return names
}

// promotionOf is the status of a stage (status.promotions), or nil.
func promotionOf(canary *v1alpha1.Canary, stage string) *v1alpha1.PromotionStatus {
	for i := range canary.Status.Promotions {
		if canary.Status.Promotions[i].Stage == stage {
			return &canary.Status.Promotions[i]
		}
	}
	return nil
}
