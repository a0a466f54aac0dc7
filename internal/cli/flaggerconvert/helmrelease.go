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

package flaggerconvert

import (
	"fmt"
	"slices"
	"strings"

	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"
)

// A Flux HelmRelease passes through the conversion, with two checks for
// the Canaries converted beside it (docs/guides/helm.md):
//
//   - serin scales a Canary's target Deployment to zero once a revision is
//     promoted. To helm-controller's drift detection that is drift from the
//     chart's replicas, and it would put them back at every reconcile. A
//     HelmRelease with drift detection on (enabled or warn) gets an ignore
//     rule for /spec/replicas of each converted Canary's Deployment in the
//     namespace it installs to, unless a rule covers it already. A rule for
//     a Deployment the chart does not render matches nothing.
//   - a chart may render a Flagger Canary itself (podinfo's
//     canary.enabled): that Canary is not in the input, so it is not
//     converted; the values that ask for it are reported.

const helmGroup = "helm.toolkit.fluxcd.io"

// fitHelmReleases checks the input's HelmReleases against the converted
// Canaries, adding the drift-detection rules they need and reporting each
// change and each chart that may render a Flagger Canary.
func (r *Result) fitHelmReleases() {
	targets := map[string][]string{} // namespace → target Deployments
	for _, m := range r.Manifests {
		c, ok := m.Object.(canaryManifest)
		if !ok || c.Spec.TargetRef.Kind != "Deployment" {
			continue
		}
		targets[c.Metadata.Namespace] = append(targets[c.Metadata.Namespace], c.Spec.TargetRef.Name)
	}
	for i := range r.Manifests {
		m := &r.Manifests[i]
		hr, ok := m.Object.(map[string]any)
		if !ok || m.Converted || m.Kind != "HelmRelease" || !strings.HasPrefix(stringAt(hr, "apiVersion"), helmGroup+"/") {
			continue
		}
		report := &objectReport{object: "HelmRelease " + qualifiedName(stringAt(hr, "metadata", "namespace"), stringAt(hr, "metadata", "name"))}
		if enabled, _ := mapAt(hr, "spec", "values", "canary")["enabled"].(bool); enabled {
			report.drop("spec.values.canary.enabled",
				"the chart may render a Flagger Canary of its own, which is not in the input and was not converted: set it to false, and let a serin Canary target the chart's Deployment")
		}
		namespace := stringAt(hr, "spec", "targetNamespace")
		if namespace == "" {
			namespace = stringAt(hr, "metadata", "namespace")
		}
		mode := stringAt(hr, "spec", "driftDetection", "mode")
		if mode != "enabled" && mode != "warn" {
			r.Dropped = append(r.Dropped, report.dropped...)
			continue
		}
		// A Canary without a namespace takes one from the kustomization
		// that applies it: any HelmRelease's.
		for _, name := range slices.Concat(targets[namespace], targets[""]) {
			if ignoresReplicas(hr, name) {
				continue
			}
			raw, err := addReplicasIgnore(m.Raw, name)
			if err == nil {
				var edited map[string]any
				if err = yaml.Unmarshal(raw, &edited); err == nil {
					m.Raw, m.Object, hr = raw, edited, edited
				}
			}
			if err != nil {
				report.drop("spec.driftDetection.ignore", "could not add /spec/replicas of Deployment %s: %v; add it by hand", name, err)
				continue
			}
			report.note("spec.driftDetection.ignore",
				"added /spec/replicas of Deployment %s, the target of a converted Canary: serin scales it to zero once a revision is promoted, which drift detection (mode %s) would undo at every reconcile", name, mode)
		}
		r.Dropped = append(r.Dropped, report.dropped...)
		r.Notes = append(r.Notes, report.notes...)
	}
}

// ignoresReplicas reports whether a drift-detection ignore rule of hr
// covers /spec/replicas of the Deployment name: a rule with that path and
// no target, or a target that selects Deployments of that name (or of
// any name).
func ignoresReplicas(hr map[string]any, name string) bool {
	rules, _ := mapAt(hr, "spec", "driftDetection")["ignore"].([]any)
	for _, r := range rules {
		rule, _ := r.(map[string]any)
		paths, _ := rule["paths"].([]any)
		if !slices.Contains(paths, any("/spec/replicas")) {
			continue
		}
		target, _ := rule["target"].(map[string]any)
		kind, _ := target["kind"].(string)
		targetName, _ := target["name"].(string)
		if (kind == "" || kind == "Deployment") && (targetName == "" || targetName == name) {
			return true
		}
	}
	return false
}

// addReplicasIgnore appends the rule that ignores /spec/replicas of the
// Deployment name to the document raw, keeping its comments and the order
// of its fields.
func addReplicasIgnore(raw []byte, name string) ([]byte, error) {
	doc, err := kyaml.Parse(string(raw))
	if err != nil {
		return nil, err
	}
	ignore, err := doc.Pipe(kyaml.LookupCreate(kyaml.SequenceNode, "spec", "driftDetection", "ignore"))
	if err != nil {
		return nil, err
	}
	rule, err := kyaml.Parse(fmt.Sprintf("paths: [/spec/replicas]\n# serin scales the Canary's target: its replicas are not drift.\ntarget: {kind: Deployment, name: %s}\n", name))
	if err != nil {
		return nil, err
	}
	if err := ignore.PipeE(kyaml.Append(rule.YNode())); err != nil {
		return nil, err
	}
	style := kyaml.SequenceIndentStyle(kyaml.DeriveSeqIndentStyle(string(raw)))
	return kyaml.MarshalWithOptions(doc.Document(), &kyaml.EncoderOptions{SeqIndent: style})
}

// mapAt returns the object at path in obj, nil (which reads as empty)
// when a step is missing or not an object.
func mapAt(obj map[string]any, path ...string) map[string]any {
	for _, p := range path {
		next, _ := obj[p].(map[string]any)
		if next == nil {
			return nil
		}
		obj = next
	}
	return obj
}

// stringAt returns the string at path in obj, "" when there is none.
func stringAt(obj map[string]any, path ...string) string {
	s, _ := mapAt(obj, path[:len(path)-1]...)[path[len(path)-1]].(string)
	return s
}

// qualifiedName is namespace/name, or name without a namespace.
func qualifiedName(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return fmt.Sprintf("%s/%s", namespace, name)
}
