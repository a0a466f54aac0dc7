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
