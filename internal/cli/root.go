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

// Package cli implements serin's command line: get, wait, events, tree,
// check, reconcile, promote, abort, retry, revert, suspend, resume, dashboard,
// convert, version and completion. It is a library so that cmd/serin
// stays a few lines and every command can be run in tests against a fake
// Kubernetes client.
package cli

import (
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/internal/agentrequest"
	"github.com/serin-dev/serin/internal/version"
)

const (
	// defaultTimeout bounds every command, as flux's --timeout does.
	defaultTimeout = 5 * time.Minute
	// defaultPollInterval is how often a command waiting for the agent
	// reads the Canary again.
	defaultPollInterval = 2 * time.Second
)

// environment is what the commands share: the kubeconfig flags, the global
// timeout, and the seams that tests replace (client, clock, poll interval).
type environment struct {
	kubeconfig   *genericclioptions.ConfigFlags
	timeout      time.Duration
	newClient    func() (client.WithWatch, error)
	now          func() time.Time
	pollInterval time.Duration
	// version is this binary's version (version.Get).
	version func() version.Info
}

// NewRootCommand returns the serin command, connected to the cluster
// selected by the kubeconfig flags. It does not look at the name it was
// invoked by, so it works the same as `serin` and as `kubectl serin`.
func NewRootCommand() *cobra.Command {
	env := &environment{
		kubeconfig:   genericclioptions.NewConfigFlags(false),
		now:          time.Now,
		pollInterval: defaultPollInterval,
		version:      version.Get,
	}
	env.newClient = func() (client.WithWatch, error) { return newKubeClient(env.kubeconfig) }
	return newRootCommand(env)
}

func newRootCommand(env *environment) *cobra.Command {
	root := &cobra.Command{
		Use:   "serin",
		Short: "Command line for serin, progressive delivery for Flux users",
		Long: `serin shows and drives the Canaries of the serin agent: it lists them and
their CanaryGroups the way flux get does (or as JSON and YAML), waits for a
rollout's verdict and exits with it (for CI), asks the agent to promote,
abort, retry or revert a revision (of a Canary, or of a group's members),
suspends and resumes Canaries, prints the objects a Canary generated with
their health (tree), checks an installation (check), serves a web dashboard
of them, and converts Flagger Canaries to serin ones.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	env.kubeconfig.AddFlags(root.PersistentFlags())
	registerConnectionCompletions(root, env)
	root.PersistentFlags().DurationVar(&env.timeout, "timeout", defaultTimeout,
		"how long a command may take, waiting and watching included")

	root.AddCommand(newGetCommand(env))
	for _, request := range agentrequest.All {
		root.AddCommand(newAgentRequestCommand(env, request))
	}
	root.AddCommand(
		newSuspensionCommand(env, suspendCanary),
		newSuspensionCommand(env, resumeCanary),
		newWaitCommand(env),
		newEventsCommand(env),
		newTreeCommand(env),
		newCheckCommand(env),
		newReconcileCommand(env),
		newDashboardCommand(env),
		newConvertCommand(),
		newVersionCommand(env),
	)
	return root
}
