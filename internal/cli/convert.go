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
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/dataplane"
	"github.com/serin-dev/serin/internal/cli/flaggerconvert"
)

func newConvertCommand() *cobra.Command {
	var in convertInput
	var meshProvider, gateway, dataPlane, metricsServer string
	var allowLossy bool
	cmd := &cobra.Command{
		Use:   "convert (-f FILENAME | -k DIRECTORY)",
		Short: "Convert Flagger Canaries to serin Canaries",
		Long: `Convert Flagger flagger.app/v1beta1 Canaries and MetricTemplates to serin
serin.dev/v1alpha1 ones. The input is a file, a directory of manifests (its
.yaml, .yml and .json files; with -R, its subdirectories' too), standard
input (-f -), or what a kustomization builds (-k). It may hold several YAML
documents, read as one input: a Canary's Ingress, ApisixRoute or
MetricTemplates are found in any of its files. Documents that are not
Flagger objects are passed through unchanged.

The converted manifests go to standard output, or with --output-dir to the
same file names under that directory, mirroring the input's tree. Every
field that could not be mapped is listed on standard error with the reason,
and each Canary with the file it came from. When something could not be
mapped the command writes no manifest and fails, unless --allow-lossy is
given.`,
		Example: `  # Convert, failing if anything would be lost
  serin convert -f flagger-canary.yaml > serin-canary.yaml

  # Convert a repository's folder, its Ingresses and MetricTemplates next to
  # its Canaries, into a tree of the same files
  serin convert -f clusters/production/apps -R --output-dir converted/

  # Convert what a kustomization builds
  serin convert -k apps/podinfo

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
			opts := flaggerconvert.Options{MeshProvider: meshProvider, MetricsServer: metricsServer}
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
			return runConvert(cmd, in, allowLossy, opts)
		},
	}
	cmd.Flags().StringVarP(&in.file, "file", "f", "", "the Flagger manifests to convert: a file, a directory, or - for standard input")
	cmd.Flags().BoolVarP(&in.recursive, "recursive", "R", false, "with -f DIRECTORY, read its subdirectories too")
	cmd.Flags().StringVarP(&in.kustomization, "kustomize", "k", "", "convert what the kustomization in this directory builds")
	cmd.Flags().StringVar(&in.outputDir, "output-dir", "", "write the conversion of each input file to the same name under this directory "+
		"(with -k, resources.yaml) instead of standard output")
	cmd.Flags().BoolVar(&allowLossy, "allow-lossy", false, "print the conversion even when some fields could not be mapped")
	cmd.Flags().StringVar(&meshProvider, "mesh-provider", "", "the -mesh-provider flag of the Flagger that ran these Canaries: "+
		"the provider of a Canary that sets no spec.provider (istio, linkerd, kubernetes, gatewayapi, …; istio for a Flagger started without the flag)")
	cmd.Flags().StringVar(&gateway, "gateway", "", "NAMESPACE/NAME[/LISTENER]: the Gateway API Gateway that takes over from "+
		"an ingress controller (providers contour, gloo, traefik, apisix, nginx, skipper); their Canaries convert to routing.provider "+
		"gatewayapi on it, weights and all (without it: kubernetes blue/green)")
	cmd.Flags().StringVar(&dataPlane, "data-plane", "", "the data plane that serves that Gateway or the mesh, for built-in checks "+
		"whose provider does not tell it: traefik, envoy-gateway, istio, nginx-gateway-fabric, cilium, contour, kuma, linkerd or application")
	cmd.Flags().StringVar(&metricsServer, "metrics-server", "", "the -metrics-server flag of the Flagger that ran these Canaries: "+
		"the Prometheus their inline metric queries are sent to, in the MetricTemplates generated for them")
	cmd.MarkFlagsOneRequired("file", "kustomize")
	cmd.MarkFlagsMutuallyExclusive("file", "kustomize")
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

func runConvert(cmd *cobra.Command, in convertInput, allowLossy bool, opts flaggerconvert.Options) error {
	files, err := in.read(cmd.InOrStdin())
	if err != nil {
		return err
	}
	var documents [][]byte
	var origin []int // the file of each document
	for i, f := range files {
		documents = append(documents, f.documents...)
		for range f.documents {
			origin = append(origin, i)
		}
	}
	result, err := opts.ConvertDocuments(documents)
	if err != nil {
		return fmt.Errorf("reading %s: %w", in.describe(), err)
	}
	log := statusLog{cmd.ErrOrStderr()}
	for _, note := range result.Notes {
		log.notef("%s", note)
	}
	for _, dropped := range result.Dropped {
		log.warningf("%s", dropped)
	}
	if len(files) > 1 {
		for _, line := range canaryOrigins(result, files, origin) {
			log.notef("%s", line)
		}
	}
	if len(result.Dropped) > 0 && !allowLossy {
		return fmt.Errorf("%s could not be mapped, so nothing was written: "+
			"fix the input, or pass --allow-lossy to print the conversion anyway", countNoun(len(result.Dropped), "field"))
	}
	byFile := make([][]flaggerconvert.Manifest, len(files))
	for _, m := range result.Manifests {
		byFile[origin[m.Source]] = append(byFile[origin[m.Source]], m)
	}
	if in.outputDir == "" {
		var out bytes.Buffer
		if err := flaggerconvert.WriteYAML(&out, slices.Concat(byFile...)); err != nil {
			return err
		}
		if _, err := cmd.OutOrStdout().Write(out.Bytes()); err != nil {
			return err
		}
	} else if err := writeOutputDir(in.outputDir, files, byFile); err != nil {
		return err
	}
	log.successf("%s", conversionSummary(result))
	return nil
}

// canaryOrigins says, for each Flagger Canary of a directory's files,
// where it came from and whether it converted with nothing lost.
func canaryOrigins(result *flaggerconvert.Result, files []inputFile, origin []int) []string {
	lost := map[string]int{}
	for _, d := range result.Dropped {
		lost[d.Object]++
	}
	var lines []string
	for _, m := range result.Manifests {
		if m.Kind != v1alpha1.CanaryKind || !m.Converted {
			continue
		}
		what := "nothing lost"
		if n := lost[m.Ref]; n > 0 {
			what = countNoun(n, "field") + " not mapped"
		}
		lines = append(lines, fmt.Sprintf("%s (%s): %s", m.Ref, files[origin[m.Source]].name, what))
	}
	return lines
}

// writeOutputDir writes each file's conversion to its name under dir.
func writeOutputDir(dir string, files []inputFile, byFile [][]flaggerconvert.Manifest) error {
	for i, f := range files {
		if len(byFile[i]) == 0 {
			continue
		}
		// The conversion is YAML, whatever the input was written in.
		name := f.name
		if strings.EqualFold(filepath.Ext(name), ".json") {
			name = strings.TrimSuffix(name, filepath.Ext(name)) + ".yaml"
		}
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		var out bytes.Buffer
		if err := flaggerconvert.WriteYAML(&out, byFile[i]); err != nil {
			return err
		}
		if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
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
	for _, kind := range []string{"Canary", "MetricTemplate", "Provider", "DestinationRule"} {
		if n := converted[kind]; n > 0 {
			kinds = append(kinds, countNoun(n, kind))
		}
	}
	summary := "converted " + orNothing(joinAnd(kinds))
	if passedThrough > 0 {
		summary += ", passed " + countNoun(passedThrough, "other object") + " through"
	}
	if n := len(result.Dropped); n > 0 {
		summary += ", could not map " + countNoun(n, "field")
	}
	return summary
}

// joinAnd joins words as a sentence does: "a", "a and b", "a, b and c".
func joinAnd(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

func countNoun(n int, noun string) string {
	switch {
	case n == 1:
		return "1 " + noun
	case strings.HasSuffix(noun, "y") && !strings.HasSuffix(noun, "ey"):
		return fmt.Sprintf("%d %sies", n, strings.TrimSuffix(noun, "y"))
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func orNothing(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}
