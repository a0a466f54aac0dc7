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

package workload

import (
	"strings"

	"github.com/serin-dev/serin/api/v1alpha1"
)

const (
	// ReconcileAnnotation tells kustomize-controller not to reconcile an
	// object: serin's generated objects must not be fought over by Flux.
	ReconcileAnnotation = "kustomize.toolkit.fluxcd.io/reconcile"
	// ReconcileDisabled is the value of ReconcileAnnotation on generated objects.
	ReconcileDisabled = "disabled"

	// CanaryNameLabel marks every object serin generates with its Canary.
	CanaryNameLabel = "serin.dev/canary"

	// fluxLabelSuffix marks the labels Flux sets on the objects it applies
	// (kustomize.toolkit.fluxcd.io/name, helm.toolkit.fluxcd.io/namespace, …);
	// they are not copied onto generated objects, or Flux would garbage
	// collect them as its own.
	fluxLabelSuffix = "toolkit.fluxcd.io"
)

// isFluxKey reports whether a label or annotation key belongs to Flux.
func isFluxKey(key string) bool {
	prefix, _, found := strings.Cut(key, "/")
	return found && strings.HasSuffix(prefix, fluxLabelSuffix)
}

// copyWithoutFlux returns a copy of m without Flux's keys (nor the agents'
// watch labels: a generated object carries its own agent's), or nil.
func copyWithoutFlux(m map[string]string) map[string]string {
	var out map[string]string
	for k, v := range m {
		if isFluxKey(k) || isWatchKey(k) {
			continue
		}
		if out == nil {
			out = make(map[string]string, len(m))
		}
		out[k] = v
	}
	return out
}

// generatedMeta returns the labels and annotations of a generated object:
// the source's own (without Flux's), the Canary label, and the annotation
// that keeps Flux from reconciling it.
func generatedMeta(canary *v1alpha1.Canary, labels, annotations map[string]string) (map[string]string, map[string]string) {
	l := copyWithoutFlux(labels)
	if l == nil {
		l = map[string]string{}
	}
	l[CanaryNameLabel] = canary.Name
	a := copyWithoutFlux(annotations)
	if a == nil {
		a = map[string]string{}
	}
	delete(a, "deployment.kubernetes.io/revision")
	delete(a, "deprecated.daemonset.template.generation") // the API server's, per DaemonSet
	delete(a, "kubectl.kubernetes.io/last-applied-configuration")
	a[ReconcileAnnotation] = ReconcileDisabled
	return l, a
}

// primarySelector rewrites each selector label value to value-primary, so the
// primary's pods never match the target's selector and vice versa.
func primarySelector(selector map[string]string) map[string]string {
	out := make(map[string]string, len(selector))
	for k, v := range selector {
		out[k] = v + v1alpha1.PrimarySuffix
	}
	return out
}
