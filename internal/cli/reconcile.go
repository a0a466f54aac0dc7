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
	"encoding/json"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
)

func newReconcileCommand(env *environment) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "reconcile",
		Short: "Ask the agent to reconcile a Canary now",
	}
	var noWait bool
	canary := &cobra.Command{
		Use:   "canary NAME",
		Short: "Ask the agent to reconcile a Canary now, and wait until it has",
		Long: `Set the reconcile.fluxcd.io/requestedAt annotation on a Canary to the current
time, as flux reconcile does, so that the agent reconciles it now rather than
at the next analysis interval, and wait (unless --no-wait) until it has
(status.lastHandledReconcileAt).`,
		Example:           `  serin reconcile canary podinfo -n apps`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: canaryNameCompletion(env),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReconcileCanary(cmd, env, args[0], noWait)
		},
	}
	canary.Flags().BoolVar(&noWait, "no-wait", false, "do not wait for the agent to reconcile the Canary")
	cmd.AddCommand(canary)
	return cmd
}

func runReconcileCanary(cmd *cobra.Command, env *environment, name string, noWait bool) error {
	s, err := env.open(cmd)
	if err != nil {
		return err
	}
	defer s.cancel()
	log := statusLog{cmd.ErrOrStderr()}
	key := types.NamespacedName{Namespace: s.namespace, Name: name}
	canary, err := getCanary(s.ctx, s.kube, key)
	if err != nil {
		return err
	}
	log.actionf("annotating %s %s in %s namespace", v1alpha1.CanaryKind, name, s.namespace)
	requested := env.now().UTC().Format(time.RFC3339Nano)
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"annotations": map[string]string{meta.ReconcileRequestAnnotation: requested}}})
	if err != nil {
		return err
	}
	if err := s.kube.Patch(s.ctx, canary, client.RawPatch(types.MergePatchType, patch), fieldOwner); err != nil {
		return err
	}
	log.successf("%s annotated", v1alpha1.CanaryKind)
	if noWait {
		return nil
	}
	log.waitingf("waiting for %s reconciliation", v1alpha1.CanaryKind)
	observed, err := waitForCanary(s.ctx, s.kube, key, env.pollInterval, func(c *v1alpha1.Canary) bool {
		return c.Status.LastHandledReconcileAt == requested
	})
	if err != nil {
		return waitError(err, env.timeout, "serin to reconcile the Canary")
	}
	log.successf("%s reconciled: %s", v1alpha1.CanaryKind, progressSummary(observed))
	return nil
}
