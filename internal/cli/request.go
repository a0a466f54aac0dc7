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
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// fieldOwner names the CLI in the managed fields of what it patches.
const fieldOwner = client.FieldOwner("serin")

// agentRequest is a request to the agent made by setting an annotation on a
// Canary to a new value; the agent records the value in
// status.handledRequests once it has acted on it.
type agentRequest struct {
	verb       string
	annotation string
	handled    func(v1alpha1.HandledRequests) string
	short      string
	long       string
}

var agentRequests = []agentRequest{
	{
		verb:       "promote",
		annotation: v1alpha1.PromoteRequestAnnotation,
		handled:    func(h v1alpha1.HandledRequests) string { return h.Promote },
		short:      "Skip the rest of the analysis and promote the current revision",
		long:       "Ask the agent to skip the rest of the analysis of the revision under analysis and promote it.",
	},
	{
		verb:       "abort",
		annotation: v1alpha1.AbortRequestAnnotation,
		handled:    func(h v1alpha1.HandledRequests) string { return h.Abort },
		short:      "Roll the current revision back now",
		long:       "Ask the agent to stop the analysis of the current revision and roll it back now.",
	},
	{
		verb:       "retry",
		annotation: v1alpha1.RetryRequestAnnotation,
		handled:    func(h v1alpha1.HandledRequests) string { return h.Retry },
		short:      "Analyse a failed revision again, without a new commit",
		long:       "Ask the agent to run the analysis of a failed revision again, without a new commit.",
	},
	{
		verb:       "revert",
		annotation: v1alpha1.RevertRequestAnnotation,
		handled:    func(h v1alpha1.HandledRequests) string { return h.Revert },
		short:      "Open the GitOps revert of the current revision now",
		long:       "Ask the agent to revert the current revision in its Git source now (a pull request, or a push with mode Push).",
	},
}

func newAgentRequestCommand(env *environment, request agentRequest) *cobra.Command {
	var noWait bool
	cmd := &cobra.Command{
		Use:   request.verb + " NAME",
		Short: request.short,
		Long: request.long + `

The command sets the annotation ` + request.annotation + ` on the Canary to
the current time and, unless --no-wait is given, waits until the agent
records that value in status.handledRequests.`,
		Example: fmt.Sprintf("  serin %s podinfo -n apps", request.verb),
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAgentRequest(cmd, env, request, args[0], noWait)
		},
		ValidArgsFunction: canaryNameCompletion(env),
	}
	cmd.Flags().BoolVar(&noWait, "no-wait", false, "do not wait for the agent to act on the request")
	return cmd
}

func runAgentRequest(cmd *cobra.Command, env *environment, request agentRequest, name string, noWait bool) error {
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
	if canary.Spec.Suspend && !noWait {
		return fmt.Errorf("%s %s in %s namespace is suspended: run serin resume first, "+
			"or pass --no-wait to leave the request for when it is resumed", v1alpha1.CanaryKind, name, namespace)
	}

	value := env.now().UTC().Format(time.RFC3339Nano)
	log.actionf("annotating %s %s in %s namespace", v1alpha1.CanaryKind, name, namespace)
	if err := annotateCanary(ctx, kube, canary, request.annotation, value); err != nil {
		return err
	}
	log.successf("%s annotated", v1alpha1.CanaryKind)
	if noWait {
		return nil
	}

	log.waitingf("waiting for serin to handle the %s request", request.verb)
	handled, err := waitForCanary(ctx, kube, key, env.pollInterval, func(c *v1alpha1.Canary) bool {
		return request.handled(c.Status.HandledRequests) == value
	})
	if err != nil {
		return waitError(err, env.timeout, fmt.Sprintf("serin to handle the %s request", request.verb))
	}
	log.successf("%s request handled: %s", request.verb, progressSummary(handled))
	return nil
}

// annotateCanary sets one annotation with a JSON merge patch.
func annotateCanary(ctx context.Context, kube client.Client, canary *v1alpha1.Canary, annotation, value string) error {
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"annotations": map[string]string{annotation: value}},
	})
	if err != nil {
		return err
	}
	return kube.Patch(ctx, canary, client.RawPatch(types.MergePatchType, patch), fieldOwner)
}

// progressSummary says where a Canary stands in a few words.
func progressSummary(canary *v1alpha1.Canary) string {
	phase := string(canary.Status.Phase)
	if phase == "" {
		phase = "<none>"
	}
	return fmt.Sprintf("phase %s, canary weight %d", phase, canary.Status.CanaryWeight)
}
