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

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// suspension is `serin suspend` or `serin resume`: both set spec.suspend.
type suspension struct {
	verb, doing, done string
	suspend           bool
	short, long       string
}

var (
	suspendCanary = suspension{
		verb: "suspend", doing: "suspending", done: "suspended", suspend: true,
		short: "Freeze a Canary: the agent takes no step until it is resumed",
		long:  "Set spec.suspend on a Canary: the agent takes no step of its rollout until it is resumed.",
	}
	resumeCanary = suspension{
		verb: "resume", doing: "resuming", done: "resumed", suspend: false,
		short: "Resume a suspended Canary",
		long:  "Clear spec.suspend on a Canary: the agent goes on with its rollout.",
	}
)

func newSuspensionCommand(env *environment, s suspension) *cobra.Command {
	var noWait bool
	var group string
	cmd := &cobra.Command{
		Use:   s.verb + " (NAME | --group GROUP)",
		Short: s.short,
		Long: s.long + `

Unless --no-wait is given, the command also requests a reconciliation (the
reconcile.fluxcd.io/requestedAt annotation, as flux reconcile does) and waits
until the agent has handled it (status.lastHandledReconcileAt).

With --group, the command does so for each member of the CanaryGroup, with a
line per member.

A Canary applied by Flux gets spec.suspend back from Git at the next
reconciliation if its manifest sets it.`,
		Example:           fmt.Sprintf("  serin %s podinfo -n apps\n  serin %s --group storefront -n apps", s.verb, s.verb),
		Args:              nameOrGroup(&group),
		ValidArgsFunction: canaryNameCompletion(env),
		RunE: func(cmd *cobra.Command, args []string) error {
			if group != "" {
				return s.runGroup(cmd, env, group, noWait)
			}
			return s.run(cmd, env, args[0], noWait)
		},
	}
	cmd.Flags().BoolVar(&noWait, "no-wait", false, "do not wait for the agent to observe the change")
	addGroupFlag(cmd, env, &group, s.verb+" every member of this CanaryGroup")
	return cmd
}

func (s suspension) run(cmd *cobra.Command, env *environment, name string, noWait bool) error {
	sess, err := env.open(cmd)
	if err != nil {
		return err
	}
	defer sess.cancel()
	ctx, kube, namespace := sess.ctx, sess.kube, sess.namespace
	log := statusLog{cmd.ErrOrStderr()}
	key := types.NamespacedName{Namespace: namespace, Name: name}

	canary, err := getCanary(ctx, kube, key)
	if err != nil {
		return err
	}
	log.actionf("%s %s %s in %s namespace", s.doing, v1alpha1.CanaryKind, name, namespace)
	// The reconcile request rides on the same patch, so the agent's handling
	// of it proves it read the new spec.suspend. status.observedGeneration
	// would not: it follows a settled outcome only, and a resumed rollout
	// settles when it ends.
	requested := ""
	if !noWait {
		requested = env.now().UTC().Format(time.RFC3339Nano)
	}
	if err := patchSuspend(ctx, kube, canary, s.suspend, requested); err != nil {
		return err
	}
	log.successf("%s %s", v1alpha1.CanaryKind, s.done)
	if noWait {
		return nil
	}

	log.waitingf("waiting for serin to handle the change")
	observed, err := waitForCanary(ctx, kube, key, env.pollInterval, func(c *v1alpha1.Canary) bool {
		return c.Status.LastHandledReconcileAt == requested
	})
	if err != nil {
		return waitError(err, env.timeout, "serin to handle the change")
	}
	log.successf("serin handled the change: %s", progressSummary(observed))
	return nil
}

// patchSuspend sets spec.suspend, and the reconcile request annotation when
// requested is not empty, with one JSON merge patch.
func patchSuspend(ctx context.Context, kube client.Client, canary *v1alpha1.Canary, suspend bool, requested string) error {
	body := map[string]any{"spec": map[string]any{"suspend": suspend}}
	if requested != "" {
		body["metadata"] = map[string]any{"annotations": map[string]string{meta.ReconcileRequestAnnotation: requested}}
	}
	patch, err := json.Marshal(body)
	if err != nil {
		return err
	}
	return kube.Patch(ctx, canary, client.RawPatch(types.MergePatchType, patch), fieldOwner)
}
