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
	"bytes"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/dataplane"
	"github.com/serin-dev/serin/internal/cli/flaggerconvert"
)

func newConvertCommand() *cobra.Command {
	var file, meshProvider, gateway, dataPlane string
	var allowLossy bool
	cmd := &cobra.Command{
		Use:   "convert -f FILE",
		Short: "Convert Flagger Canaries to serin Canaries",
		Long: `Convert Flagger flagger.app/v1beta1 Canaries and MetricTemplates to serin
serin.dev/v1alpha1 ones. The input may hold several YAML documents; documents
that are not Flagger objects are passed through unchanged.

The converted manifests go to standard output. Every field that could not be
mapped is listed on standard error with the reason. When something could not
be mapped the command prints no manifest and fails, unless --allow-lossy is
given.`,
		Example: `  # Convert, failing if anything would be lost
  serin convert -f flagger-canary.yaml > serin-canary.yaml

  # Convert what can be converted and review the listed losses
  serin convert -f flagger-canary.yaml --allow-lossy

  # Canaries that set no spec.provider, from a Flagger run with -mesh-provider=istio
  serin convert -f flagger-canary.yaml --mesh-provider istio

  # Canaries of Contour, Gloo, Traefik, APISIX, NGINX or Skipper, moving to
  # Gateway API: their weights carry over to an HTTPRoute on that Gateway
  serin convert -f flagger-canary.yaml --gateway gateways/public --data-plane envoy-gateway

  # NGINX Canaries with their Ingresses (APISIX: ApisixRoutes), whose hosts and paths the HTTPRoutes take
  kubectl get canaries.flagger.app,ingresses -n apps -o yaml | serin convert -f - --gateway gateways/public

  # Read standard input
  kubectl get canaries.flagger.app podinfo -n apps -o yaml | serin convert -f -`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts := flaggerconvert.Options{MeshProvider: meshProvider}
			if gateway != "" {
				ref, err := parseGatewayFlag(gateway)
				if err != nil {
					return err
				}
				opts.Gateway = ref
			}
			if dataPlane != "" {
				parsed, err := dataplane.Parse(dataPlane)
				if err != nil {
					return fmt.Errorf("--data-plane: %w", err)
				}
				opts.DataPlane = parsed
			}
			return runConvert(cmd, file, allowLossy, opts)
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "the Flagger manifests to convert; - reads standard input")
	cmd.Flags().BoolVar(&allowLossy, "allow-lossy", false, "print the conversion even when some fields could not be mapped")
	cmd.Flags().StringVar(&meshProvider, "mesh-provider", "", "the -mesh-provider flag of the Flagger that ran these Canaries: "+
		"the provider of a Canary that sets no spec.provider (istio, linkerd, kubernetes, gatewayapi, …; istio for a Flagger started without the flag)")
	cmd.Flags().StringVar(&gateway, "gateway", "", "NAMESPACE/NAME[/LISTENER]: the Gateway API Gateway that takes over from "+
		"an ingress controller (providers contour, gloo, traefik, apisix, nginx, skipper); their Canaries convert to routing.provider "+
		"gatewayapi on it, weights and all (without it: kubernetes blue/green)")
	cmd.Flags().StringVar(&dataPlane, "data-plane", "", "the data plane that serves that Gateway or the mesh, for built-in checks "+
		"whose provider does not tell it: traefik, envoy-gateway, istio, nginx-gateway-fabric, cilium, contour, kuma, linkerd or application")
	_ = cmd.MarkFlagRequired("file")
	return cmd
}

// parseGatewayFlag reads --gateway: NAMESPACE/NAME or NAMESPACE/NAME/LISTENER.
func parseGatewayFlag(value string) (*v1alpha1.GatewayReference, error) {
	parts := strings.Split(value, "/")
	if len(parts) < 2 || len(parts) > 3 || slices.Contains(parts, "") {
		return nil, fmt.Errorf("--gateway %q: want NAMESPACE/NAME or NAMESPACE/NAME/LISTENER", value)
	}
	ref := &v1alpha1.GatewayReference{Namespace: parts[0], Name: parts[1]}
	if len(parts) == 3 {
		ref.SectionName = parts[2]
	}
	return ref, nil
}

func runConvert(cmd *cobra.Command, file string, allowLossy bool, opts flaggerconvert.Options) error {
	input, err := readInput(cmd.InOrStdin(), file)
	if err != nil {
		return err
	}
	result, err := opts.Convert(input)
	if err != nil {
		source := file
		if file == "-" {
			source = "standard input"
		}
		return fmt.Errorf("reading %s: %w", source, err)
	}
	log := statusLog{cmd.ErrOrStderr()}
	for _, note := range result.Notes {
		log.notef("%s", note)
	}
	for _, dropped := range result.Dropped {
		log.warningf("%s", dropped)
	}
	if len(result.Dropped) > 0 && !allowLossy {
		return fmt.Errorf("%s could not be mapped, so nothing was written: "+
			"fix the input, or pass --allow-lossy to print the conversion anyway", countNoun(len(result.Dropped), "field"))
	}
	var out bytes.Buffer
	if err := flaggerconvert.WriteYAML(&out, result.Manifests); err != nil {
		return err
	}
	if _, err := cmd.OutOrStdout().Write(out.Bytes()); err != nil {
		return err
	}
	log.successf("%s", conversionSummary(result))
	return nil
}

func readInput(stdin io.Reader, file string) ([]byte, error) {
	if file == "-" {
		return io.ReadAll(stdin)
	}
	return os.ReadFile(file)
}

// conversionSummary counts what was written: "converted 1 Canary and 2
// MetricTemplates, passed 1 object through, dropped 3 fields".
func conversionSummary(result *flaggerconvert.Result) string {
	converted := map[string]int{}
	passedThrough := 0
	for _, manifest := range result.Manifests {
		if manifest.Converted {
			converted[manifest.Kind]++
		} else {
			passedThrough++
		}
	}
	var kinds []string
	for _, kind := range []string{"Canary", "MetricTemplate"} {
		if n := converted[kind]; n > 0 {
			kinds = append(kinds, countNoun(n, kind))
		}
	}
	summary := "converted " + orNothing(strings.Join(kinds, " and "))
	if passedThrough > 0 {
		summary += ", passed " + countNoun(passedThrough, "other object") + " through"
	}
	if n := len(result.Dropped); n > 0 {
		summary += ", could not map " + countNoun(n, "field")
	}
	return summary
}

func countNoun(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func orNothing(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}
