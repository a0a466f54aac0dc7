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
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/agentrequest"
)

// fieldOwner names the CLI in the managed fields of what it patches.
const fieldOwner = agentrequest.FieldOwner

func newAgentRequestCommand(env *environment, request agentrequest.Request) *cobra.Command {
	var noWait bool
	var group, stage string
	groupRequest, groupable := groupRequests[request.Verb]
	cmd := &cobra.Command{
		Use:   request.Verb + " NAME",
		Short: request.Short,
		Long: request.Long + `

The command sets the annotation ` + request.Annotation + ` on the Canary to
the current time and, unless --no-wait is given, waits until the agent
records that value in status.handledRequests.`,
		Example: fmt.Sprintf("  serin %s podinfo -n apps", request.Verb),
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			toStage := cmd.Flags().Changed("to")
			switch {
			case toStage && group != "":
				return errToWithGroup
			case group != "":
				return runGroupRequest(cmd, env, request, group, noWait)
			case toStage:
				return runPromoteTo(cmd, env, args[0], stage, noWait)
			}
			return runAgentRequest(cmd, env, request, args[0], noWait)
		},
		ValidArgsFunction: canaryNameCompletion(env),
	}
	cmd.Flags().BoolVar(&noWait, "no-wait", false, "do not wait for the agent to act on the request")
	if groupable {
		cmd.Use = request.Verb + " (NAME | --group GROUP)"
		cmd.Long += `

With --group GROUP instead of NAME, it annotates the members of the
CanaryGroup the request is for, with a line per member: those in phase
` + joinPhases(groupRequest.phases) + ` (the agent acts on it in no other phase).`
		cmd.Example += fmt.Sprintf("\n  serin %s --group storefront -n apps", request.Verb)
		cmd.Args = nameOrGroup(&group)
		addGroupFlag(cmd, env, &group, "send the request to the members of this CanaryGroup "+groupRequest.members)
	}
	if isPromote(request) {
		cmd.Use = strings.Replace(cmd.Use, "NAME", "NAME [--to STAGE]", 1)
		cmd.Long += promoteToHelp
		cmd.Example += fmt.Sprintf("\n  serin %s podinfo --to production -n apps", request.Verb)
		addToFlag(cmd, env, &stage)
	}
	return cmd
}

func runAgentRequest(cmd *cobra.Command, env *environment, request agentrequest.Request, name string, noWait bool) error {
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

	log.actionf("annotating %s %s in %s namespace", v1alpha1.CanaryKind, name, namespace)
	value, err := request.Send(ctx, kube, canary, env.now())
	if err != nil {
		return err
	}
	log.successf("%s annotated", v1alpha1.CanaryKind)
	if noWait {
		return nil
	}

	log.waitingf("waiting for serin to handle the %s request", request.Verb)
	handled, err := waitForCanary(ctx, kube, key, env.pollInterval, func(c *v1alpha1.Canary) bool {
		return request.Handled(c, value)
	})
	if err != nil {
		return waitError(err, env.timeout, fmt.Sprintf("serin to handle the %s request", request.Verb))
	}
	log.successf("%s request handled: %s", request.Verb, progressSummary(handled))
	return nil
}

// progressSummary says where a Canary stands in a few words.
func progressSummary(canary *v1alpha1.Canary) string {
	phase := string(canary.Status.Phase)
	if phase == "" {
		phase = "<none>"
	}
	return fmt.Sprintf("phase %s, canary weight %d", phase, canary.Status.CanaryWeight)
}
