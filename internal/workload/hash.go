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
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"

	corev1 "k8s.io/api/core/v1"
)

// SpecHash returns a short, stable hash of a pod template and of the data of
// the ConfigMaps and Secrets it tracks (kind/name → data hash): a change to
// either is a new revision.
func SpecHash(tpl *corev1.PodTemplateSpec, tracked map[string]string) string {
	h := sha256.New()
	b, _ := json.Marshal(normalizedTemplate(tpl))
	h.Write(b)
	keys := make([]string, 0, len(tracked))
	for k := range tracked {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		h.Write([]byte("\x00" + k + "=" + tracked[k]))
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// normalizedTemplate drops what changes without being a new revision: Flux's
// labels and annotations.
func normalizedTemplate(tpl *corev1.PodTemplateSpec) *corev1.PodTemplateSpec {
	out := tpl.DeepCopy()
	out.Labels = copyWithoutFlux(out.Labels)
	out.Annotations = copyWithoutFlux(out.Annotations)
	return out
}
