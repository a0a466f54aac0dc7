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
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
)

func newEventsCommand(env *environment) *cobra.Command {
	var group bool
	cmd := &cobra.Command{
		Use:   "events NAME",
		Short: "Print the Kubernetes Events of a Canary, newest last",
		Long: `Print every Kubernetes Event the agent recorded for a Canary (or, with
--group, a CanaryGroup), oldest first, as flux events --for Canary/NAME does:
when it was last seen, its type, reason and message. The API server keeps
Events for an hour; serin get canary keeps the analysis record longer.`,
		Example: `  serin events podinfo -n apps
  serin events storefront --group -n apps`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: canaryNameCompletion(env),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := env.open(cmd)
			if err != nil {
				return err
			}
			defer s.cancel()
			key := client.ObjectKey{Namespace: s.namespace, Name: args[0]}
			var object client.Object
			kind := v1alpha1.CanaryKind
			if group {
				kind = v1alpha1.CanaryGroupKind
				object, err = getGroup(s.ctx, s.kube, key)
			} else {
				object, err = getCanary(s.ctx, s.kube, key)
			}
			if err != nil {
				return err
			}
			events, err := objectEvents(s.ctx, s.kube, kind, object)
			if err != nil {
				return err
			}
			if len(events) == 0 {
				statusLog{cmd.ErrOrStderr()}.failuref("no events found for %s %s in %q namespace", kind, args[0], s.namespace)
				return nil
			}
			rows := make([][]string, len(events))
			now := env.now()
			for i := range events {
				event := &events[i]
				rows[i] = []string{ageAt(now, eventLastSeen(event)), event.Type, event.Reason,
					kind + "/" + args[0], strings.TrimSpace(strings.ReplaceAll(event.Message, "\n", " "))}
			}
			return writeTable(cmd.OutOrStdout(), []string{"LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"}, rows)
		},
	}
	cmd.Flags().BoolVar(&group, "group", false, "NAME is a CanaryGroup")
	return cmd
}
