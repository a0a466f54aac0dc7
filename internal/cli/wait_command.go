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
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// defaultWaitTimeout is how long `serin wait` waits when --timeout is not
// given: longer than the other commands, since a rollout takes several
// analysis intervals.
const defaultWaitTimeout = 10 * time.Minute

func newWaitCommand(env *environment) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "wait",
		Short: "Wait for the verdict of a rollout and exit with it",
		Long: `The wait sub-commands follow the rollout of a Canary, or the release of a
CanaryGroup, until it ends, print its verdict, and exit with it: 0 when the
revision serves, 1 when it failed, halted or stalled, 2 when it cannot be waited for,
3 when --timeout (default 10m) runs out first. For CI: fail the pipeline
when the canary fails.`,
	}
	// A flag the command does not know is a usage error: exit status 2.
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return withExitCode(ExitCannotWait, err) })
	cmd.AddCommand(newWaitCanaryCommand(env), newWaitGroupCommand(env))
	return cmd
}

// waitOptions are the flags of `serin wait canary|group`.
type waitOptions struct {
	revision string
}

func (o *waitOptions) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.revision, "revision", "",
		"wait for the rollout of this Flux revision (main@sha1:<sha>, sha1:<sha>, or a SHA or its first 7+ characters) instead of the current one")
}

// oneName is cobra.ExactArgs(1), a usage error (exit status 2).
func oneName(cmd *cobra.Command, args []string) error {
	return withExitCode(ExitCannotWait, cobra.ExactArgs(1)(cmd, args))
}

func newWaitCanaryCommand(env *environment) *cobra.Command {
	var opts waitOptions
	cmd := &cobra.Command{
		Use:   "canary NAME",
		Short: "Wait until a Canary's rollout succeeds or fails",
		Long: `Wait until the rollout of a Canary ends, print the verdict, and exit with it:
0 when it succeeded (or the Canary is initialized with nothing to roll out),
1 when it failed or halted (with the Ready message, the failed checks and the
revert) or the Canary is stalled (with the Stalled message; also before it
attempted --revision), 2 when it cannot be waited for (not found,
suspended, a usage error), 3 when --timeout (default 10m) runs out first.

With --revision, the Canary must first see that revision (the one a CI job
just applied), so that the verdict of an earlier rollout is not taken for
it.`,
		Example: `  # After applying a commit: fail the job if the canary fails
  serin wait canary podinfo -n apps --revision "main@sha1:${GITHUB_SHA}" --timeout 30m

  # The rollout under way, whatever its revision
  serin wait canary podinfo -n apps`,
		Args:              oneName,
		ValidArgsFunction: canaryNameCompletion(env),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runWait(cmd, env, args[0], opts, canaryWaitTarget)
		},
	}
	opts.addFlags(cmd)
	return cmd
}

func newWaitGroupCommand(env *environment) *cobra.Command {
	var opts waitOptions
	cmd := &cobra.Command{
		Use:     "group NAME",
		Aliases: []string{"canarygroup"},
		Short:   "Wait until a CanaryGroup's release succeeds or fails",
		Long: `Wait until the release of a CanaryGroup ends (every member promoted, or one
failed and the others rolled back with it), print the verdict, and exit with
it, with the exit statuses of serin wait canary. With --revision, the group
must have a release of that revision, current or earlier.`,
		Example:           `  serin wait group storefront -n apps --revision "${CI_COMMIT_SHA}" --timeout 1h`,
		Args:              oneName,
		ValidArgsFunction: groupNameCompletion(env),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runWait(cmd, env, args[0], opts, groupWaitTarget)
		},
	}
	opts.addFlags(cmd)
	return cmd
}

// waitTarget is what `serin wait` follows: a Canary or a CanaryGroup.
type waitTarget[T any] struct {
	kind    string
	newObj  func() T
	verdict func(object T, revision string) verdict
	// suspended tells whether the object takes no step; nil when it cannot
	// be suspended.
	suspended func(object T) bool
}

var canaryWaitTarget = waitTarget[*v1alpha1.Canary]{
	kind:      v1alpha1.CanaryKind,
	newObj:    func() *v1alpha1.Canary { return &v1alpha1.Canary{} },
	verdict:   canaryVerdict,
	suspended: func(c *v1alpha1.Canary) bool { return c.Spec.Suspend },
}

var groupWaitTarget = waitTarget[*v1alpha1.CanaryGroup]{
	kind:    v1alpha1.CanaryGroupKind,
	newObj:  func() *v1alpha1.CanaryGroup { return &v1alpha1.CanaryGroup{} },
	verdict: groupVerdict,
}

// runWait reads the object every poll interval, prints each new state,
// and ends with its verdict; every error but a failed rollout or the
// timeout is ExitCannotWait.
func runWait[T client.Object](cmd *cobra.Command, env *environment, name string, opts waitOptions, target waitTarget[T]) error {
	timeout := env.timeout
	if !cmd.Flags().Changed("timeout") {
		timeout = defaultWaitTimeout
	}
	namespace, err := env.namespace()
	if err != nil {
		return withExitCode(ExitCannotWait, err)
	}
	kube, err := env.newClient()
	if err != nil {
		return withExitCode(ExitCannotWait, err)
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
	defer cancel()

	log := statusLog{cmd.ErrOrStderr()}
	subject := fmt.Sprintf("%s %s in %s namespace", target.kind, name, namespace)
	what := "the verdict of its rollout"
	if opts.revision != "" {
		what = "the verdict of revision " + opts.revision
	}
	log.waitingf("waiting for %s: %s (timeout %s)", subject, what, timeout)

	var last verdict
	var lastState string
	key := client.ObjectKey{Namespace: namespace, Name: name}
	err = wait.PollUntilContextCancel(ctx, env.pollInterval, true, func(ctx context.Context) (bool, error) {
		object := target.newObj()
		if err := kube.Get(ctx, key, object); err != nil {
			return false, waitReadError(ctx, err, target.kind, key, log)
		}
		last = target.verdict(object, opts.revision)
		if last.state != lastState {
			lastState = last.state
			if last.kind == verdictPending {
				log.waitingf("%s", last.state)
			}
		}
		if last.kind == verdictPending && target.suspended != nil && target.suspended(object) {
			return false, fmt.Errorf("%s is suspended: it takes no step until resumed (serin resume %s)", subject, name)
		}
		return last.kind != verdictPending, nil
	})
	switch {
	case err == nil:
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return withExitCode(ExitTimeout, fmt.Errorf("timed out after %s waiting for %s: %s", timeout, subject, orNone(lastState)))
	default:
		return withExitCode(ExitCannotWait, err)
	}
	if last.kind == verdictFailed {
		lines := append([]string{fmt.Sprintf("%s failed: %s", subject, last.state)}, last.details...)
		return withExitCode(ExitFailed, errors.New(strings.Join(lines, "\n  ")))
	}
	log.successf("%s succeeded: %s", subject, last.state)
	return nil
}

// waitReadError words an error reading the object: one that waiting longer
// will not fix ends the wait; any other is printed, and the next poll
// tries again, so that a blip of the API server does not fail a CI job.
func waitReadError(ctx context.Context, err error, kind string, key client.ObjectKey, log statusLog) error {
	switch {
	case apierrors.IsNotFound(err):
		return objectScope{kind: kind, namespace: key.Namespace, name: key.Name}.notFoundError()
	case apierrors.IsForbidden(err), apierrors.IsUnauthorized(err), ctx.Err() != nil:
		return err
	}
	log.warningf("reading %s %s: %v; trying again", kind, key.Name, err)
	return nil
}
