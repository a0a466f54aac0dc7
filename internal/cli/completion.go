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
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// completionTimeout keeps shell completion responsive on a slow cluster.
const completionTimeout = 5 * time.Second

// canaryNameCompletion completes the NAME argument with the Canaries of the
// namespace. Cobra's own `completion` command turns it into shell scripts.
func canaryNameCompletion(env *environment) cobra.CompletionFunc {
	return argumentCompletion(namesCompletion(env, canaryNames))
}

// groupNameCompletion completes the NAME argument with the CanaryGroups of
// the namespace.
func groupNameCompletion(env *environment) cobra.CompletionFunc {
	return argumentCompletion(namesCompletion(env, groupNames))
}

// argumentCompletion completes the first argument only.
func argumentCompletion(names cobra.CompletionFunc) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return names(cmd, args, toComplete)
	}
}

// namesCompletion completes with the names list finds in the namespace
// that start with what was typed; it completes a flag's value as well as
// an argument.
func namesCompletion(env *environment, list func(context.Context, client.Client, string) ([]string, error)) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
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
		all, err := list(ctx, kube, namespace)
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		var names []string
		for _, name := range all {
			if strings.HasPrefix(name, toComplete) {
				names = append(names, name)
			}
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}

func canaryNames(ctx context.Context, kube client.Client, namespace string) ([]string, error) {
	list := &v1alpha1.CanaryList{}
	err := kube.List(ctx, list, client.InNamespace(namespace))
	return namesOf(list.Items), err
}

func groupNames(ctx context.Context, kube client.Client, namespace string) ([]string, error) {
	list := &v1alpha1.CanaryGroupList{}
	err := kube.List(ctx, list, client.InNamespace(namespace))
	return namesOf(list.Items), err
}

// namesOf returns the names of a list's items.
func namesOf[T any, P interface {
	*T
	client.Object
}](items []T) []string {
	names := make([]string, len(items))
	for i := range items {
		names[i] = P(&items[i]).GetName()
	}
	return names
}

// registerConnectionCompletions completes --context with the contexts of
// the kubeconfig and --namespace with the namespaces of the cluster.
func registerConnectionCompletions(root *cobra.Command, env *environment) {
	_ = root.RegisterFlagCompletionFunc("context", func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		config, err := env.kubeconfig.ToRawKubeConfigLoader().RawConfig()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		var names []string
		for name := range config.Contexts {
			if strings.HasPrefix(name, toComplete) {
				names = append(names, name)
			}
		}
		slices.Sort(names)
		return names, cobra.ShellCompDirectiveNoFileComp
	})
	_ = root.RegisterFlagCompletionFunc("namespace", func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		kube, err := env.newClient()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
		defer cancel()
		list := &corev1.NamespaceList{}
		if err := kube.List(ctx, list); err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		var names []string
		for _, name := range namesOf(list.Items) {
			if strings.HasPrefix(name, toComplete) {
				names = append(names, name)
			}
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	})
}
