package cli

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// completionTimeout keeps shell completion responsive on a slow cluster.
const completionTimeout = 5 * time.Second

// canaryNameCompletion completes the NAME argument with the Canaries of the
// namespace. Cobra's own `completion` command turns it into shell scripts.
func canaryNameCompletion(env *environment) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
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
		list := &v1alpha1.CanaryList{}
		if err := kube.List(ctx, list, client.InNamespace(namespace)); err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		var names []string
		for _, canary := range list.Items {
			if strings.HasPrefix(canary.Name, toComplete) {
				names = append(names, canary.Name)
			}
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}
