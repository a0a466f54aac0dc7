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
	"fmt"

	"github.com/spf13/cobra"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// newScheme holds the Kubernetes built-in types (Deployments for the agent's
// version, Events), CustomResourceDefinitions (serin check) and serin's API.
func newScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(apiextensionsv1.AddToScheme(scheme))
	utilruntime.Must(v1alpha1.AddToScheme(scheme))
	return scheme
}

// newKubeClient connects to the cluster the kubeconfig flags select, with
// client-go's loading rules (--kubeconfig, $KUBECONFIG, ~/.kube/config,
// in-cluster).
func newKubeClient(flags *genericclioptions.ConfigFlags) (client.WithWatch, error) {
	restConfig, err := flags.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig: %w", err)
	}
	restConfig.UserAgent = "serin-cli"
	return client.NewWithWatch(restConfig, client.Options{Scheme: newScheme()})
}

// namespace returns the namespace of -n, or else of the kubeconfig context,
// or else "default".
func (env *environment) namespace() (string, error) {
	namespace, _, err := env.kubeconfig.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", fmt.Errorf("resolving the namespace: %w", err)
	}
	return namespace, nil
}

// session is what a command needs to act on one namespace of the cluster:
// a client, the namespace, and a context bounded by --timeout.
type session struct {
	ctx       context.Context
	cancel    context.CancelFunc
	kube      client.WithWatch
	namespace string
}

// open resolves the namespace, connects, and starts the --timeout clock;
// the caller defers s.cancel().
func (env *environment) open(cmd *cobra.Command) (*session, error) {
	namespace, err := env.namespace()
	if err != nil {
		return nil, err
	}
	kube, err := env.newClient()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), env.timeout)
	return &session{ctx: ctx, cancel: cancel, kube: kube, namespace: namespace}, nil
}
