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
	"slices"
	"strings"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
)

const (
	// minKubernetesVersion is the oldest Kubernetes serin supports.
	minKubernetesVersion = "1.30.0"
	// defaultFluxNamespace is where flux bootstrap installs Flux.
	defaultFluxNamespace = "flux-system"
	// notificationControllerName is Flux's notification-controller
	// Deployment, which delivers the agent's events to Flux Providers.
	notificationControllerName = "notification-controller"
	// agentSelector finds the agent's Deployment as config/manager
	// (serin-agent) and the chart (serin) label it.
	agentSelector = "app.kubernetes.io/name in (serin, serin-agent),app.kubernetes.io/component=agent"
)

// serinCRDs are the CRDs of serin's API, which must serve v1alpha1.
var serinCRDs = []string{"canaries.serin.dev", "canarygroups.serin.dev", "metrictemplates.serin.dev"}

// Optional CRDs: serin works without them, less a feature.
const (
	httpRouteCRD = "httproutes.gateway.networking.k8s.io"
	providerCRD  = "providers.notification.toolkit.fluxcd.io"
)

// checkLog prints the lines of `serin check` and counts the failures of
// the required checks.
type checkLog struct {
	statusLog
	failed int
}

// result prints ✔ when ok, else ✗ and counts a failure.
func (l *checkLog) result(ok bool, format string, args ...any) {
	if ok {
		l.successf(format, args...)
		return
	}
	l.failed++
	l.failuref(format, args...)
}

// optional prints ✔ when ok, else a warning that fails nothing.
func (l *checkLog) optional(ok bool, format string, args ...any) {
	if ok {
		l.successf(format, args...)
		return
	}
	l.warningf(format, args...)
}

func newCheckCommand(env *environment) *cobra.Command {
	var pre bool
	var agentNamespace, fluxNamespace string
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Check the prerequisites and the installation of serin",
		Long: `Check, as flux check does, that the cluster runs Kubernetes ` + minKubernetesVersion + ` or later,
which optional APIs serin can use (Gateway API HTTPRoutes for gatewayapi
routing, Flux's notification-controller for spec.alerts), that serin's CRDs
serve serin.dev/v1alpha1, that the serin agent is deployed and ready, and
that every HTTPRoute a Canary steers (routing.routeRefs) is one it can
steer, whose Flux Kustomization leaves the steered backends to serin.
With --pre, only the prerequisites are checked, before installing serin.
A missing optional API is a warning; any other failed check ends the
command with exit status 1.`,
		Example: `  serin check --pre
  serin check
  serin check --agent-namespace serin`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			kube, err := env.newClient()
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), env.timeout)
			defer cancel()
			l := &checkLog{statusLog: statusLog{cmd.ErrOrStderr()}}

			l.actionf("checking prerequisites")
			checkKubernetesVersion(env, l)
			if err := checkOptionalAPIs(ctx, kube, l, fluxNamespace, pre); err != nil {
				return err
			}
			if !pre {
				l.actionf("checking the serin CRDs")
				if err := checkSerinCRDs(ctx, kube, l); err != nil {
					return err
				}
				l.actionf("checking the agent")
				if err := checkAgent(ctx, kube, l, agentNamespace); err != nil {
					return err
				}
				if err := checkSteeredRoutes(ctx, kube, l); err != nil {
					return err
				}
			}
			if l.failed > 0 {
				if l.failed == 1 {
					return errors.New("1 check failed")
				}
				return fmt.Errorf("%d checks failed", l.failed)
			}
			l.successf("all checks passed")
			return nil
		},
	}
	cmd.Flags().BoolVar(&pre, "pre", false, "check only the prerequisites: the Kubernetes version and the optional APIs")
	cmd.Flags().StringVar(&agentNamespace, "agent-namespace", defaultAgentNamespace, "namespace of the serin agent's Deployment")
	cmd.Flags().StringVar(&fluxNamespace, "flux-namespace", defaultFluxNamespace, "namespace of Flux's notification-controller")
	return cmd
}

// checkKubernetesVersion checks the API server's version, from discovery.
func checkKubernetesVersion(env *environment, l *checkLog) {
	discovery, err := env.kubeconfig.ToDiscoveryClient()
	if err != nil {
		l.result(false, "Kubernetes version unknown: %v", err)
		return
	}
	info, err := discovery.ServerVersion()
	if err != nil {
		l.result(false, "Kubernetes version unknown: %v", err)
		return
	}
	ok, err := kubernetesVersionSupported(info.GitVersion)
	if err != nil {
		l.result(false, "Kubernetes version %q: %v", info.GitVersion, err)
		return
	}
	l.result(ok, "Kubernetes %s >=%s", strings.TrimPrefix(info.GitVersion, "v"), minKubernetesVersion)
}

// kubernetesVersionSupported tells whether a server's gitVersion (v1.31.2,
// v1.30.4-eks-a737599, v1.32.0+k3s1) is minKubernetesVersion or later; a
// vendor's pre-release suffix counts as the release.
func kubernetesVersionSupported(gitVersion string) (bool, error) {
	v, err := version.ParseGeneric(gitVersion)
	if err != nil {
		return false, err
	}
	return v.AtLeast(version.MustParseGeneric(minKubernetesVersion)), nil
}

// checkOptionalAPIs checks the Gateway API and Flux's notification API,
// and, after --pre, that notification-controller is ready.
func checkOptionalAPIs(ctx context.Context, kube client.Client, l *checkLog, fluxNamespace string, pre bool) error {
	routes, err := getCRD(ctx, kube, httpRouteCRD)
	if err != nil {
		return err
	}
	if routes == nil {
		l.optional(false, "Gateway API: %s not installed: gatewayapi routing is not available", httpRouteCRD)
	} else {
		l.optional(true, "Gateway API: %s, served %s", httpRouteCRD, strings.Join(servedVersions(routes), ", "))
	}
	providers, err := getCRD(ctx, kube, providerCRD)
	if err != nil {
		return err
	}
	if providers == nil {
		l.optional(false, "Flux: %s not installed: spec.alerts cannot name Flux Providers", providerCRD)
		return nil
	}
	l.optional(true, "Flux: %s, served %s", providerCRD, strings.Join(servedVersions(providers), ", "))
	if pre {
		return nil
	}
	controller := &appsv1.Deployment{}
	err = kube.Get(ctx, client.ObjectKey{Namespace: fluxNamespace, Name: notificationControllerName}, controller)
	switch {
	case apierrors.IsNotFound(err):
		l.optional(false, "%s: no Deployment in %s namespace: Flux Providers get no events", notificationControllerName, fluxNamespace)
	case err != nil:
		return fmt.Errorf("reading Deployment %s/%s: %w", fluxNamespace, notificationControllerName, err)
	default:
		health := workloadHealth(controller, "Deployment")
		l.optional(health == "", "%s: %s", notificationControllerName, deploymentState(health))
	}
	return nil
}

// checkSerinCRDs checks that each of serin's CRDs serves v1alpha1, and
// prints the versions it stores.
func checkSerinCRDs(ctx context.Context, kube client.Client, l *checkLog) error {
	want := v1alpha1.GroupVersion.Version
	for _, name := range serinCRDs {
		crd, err := getCRD(ctx, kube, name)
		switch {
		case err != nil:
			return err
		case crd == nil:
			l.result(false, "%s: not installed", name)
		case !slices.Contains(servedVersions(crd), want):
			l.result(false, "%s: does not serve %s (served: %s): install the CRDs of this serin version",
				name, want, strings.Join(servedVersions(crd), ", "))
		default:
			l.result(true, "%s: served %s, stored %s", name,
				strings.Join(servedVersions(crd), ", "), strings.Join(crd.Status.StoredVersions, ", "))
		}
	}
	return nil
}

// checkAgent checks that the agent's Deployment exists in namespace and is
// ready, and prints its image.
func checkAgent(ctx context.Context, kube client.Client, l *checkLog, namespace string) error {
	list := &appsv1.DeploymentList{}
	selector, err := labels.Parse(agentSelector)
	if err != nil {
		return err
	}
	if err := kube.List(ctx, list, client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: selector}); err != nil {
		return fmt.Errorf("listing the agent's Deployments in %s namespace: %w", namespace, err)
	}
	if len(list.Items) == 0 {
		l.result(false, "serin agent: no Deployment labelled app.kubernetes.io/name=serin-agent (or serin) in %s namespace: install serin, or give --agent-namespace", namespace)
		return nil
	}
	for i := range list.Items {
		d := &list.Items[i]
		health := workloadHealth(d, "Deployment")
		l.result(health == "", "%s: %s", d.Name, deploymentState(health))
		if image := agentImage(d); image != "" {
			l.actionf("%s", image)
		}
	}
	return nil
}

// agentImage is the image of the agent's container (else the first one);
// "" when the Deployment has no container.
func agentImage(d *appsv1.Deployment) string {
	containers := d.Spec.Template.Spec.Containers
	for _, c := range containers {
		if c.Name == agentContainerName {
			return c.Image
		}
	}
	if len(containers) > 0 {
		return containers[0].Image
	}
	return ""
}

// workloadHealth is "" when kstatus reads the object as Current, else its
// status and message.
func workloadHealth(object any, kind string) string {
	u := toUnstructured(object, "apps/v1", kind)
	if u == nil {
		return string(status.UnknownStatus)
	}
	result, err := status.Compute(u)
	if err != nil {
		return err.Error()
	}
	if result.Status == status.CurrentStatus {
		return ""
	}
	return fmt.Sprintf("%s: %s", result.Status, result.Message)
}

func deploymentState(health string) string {
	if health == "" {
		return "deployment ready"
	}
	return "deployment not ready: " + health
}

// getCRD reads a CRD; nil when it is not installed.
func getCRD(ctx context.Context, kube client.Client, name string) (*apiextensionsv1.CustomResourceDefinition, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	err := kube.Get(ctx, client.ObjectKey{Name: name}, crd)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading CustomResourceDefinition %s: %w", name, err)
	}
	return crd, nil
}

// servedVersions are the versions a CRD serves, in its order.
func servedVersions(crd *apiextensionsv1.CustomResourceDefinition) []string {
	var served []string
	for _, v := range crd.Spec.Versions {
		if v.Served {
			served = append(served, v.Name)
		}
	}
	return served
}
