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
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// ConfigRef names a ConfigMap or Secret a pod template uses.
type ConfigRef struct {
	Kind string // ConfigMap or Secret
	Name string
}

// String is the key of status.trackedConfigs: Kind/name.
func (r ConfigRef) String() string { return r.Kind + "/" + r.Name }

// ParseConfigRef reads a status.trackedConfigs key.
func ParseConfigRef(key string) (ConfigRef, bool) {
	kind, name, ok := strings.Cut(key, "/")
	return ConfigRef{Kind: kind, Name: name}, ok && (kind == "ConfigMap" || kind == "Secret") && name != ""
}

// ConfigRefs returns the ConfigMaps and Secrets a pod template mounts or
// reads into its environment, sorted and without repeats. A change to their
// data is a new revision, like a change to the template.
func ConfigRefs(tpl *corev1.PodTemplateSpec) []ConfigRef {
	seen := map[ConfigRef]bool{}
	add := func(kind, name string) {
		if name != "" {
			seen[ConfigRef{Kind: kind, Name: name}] = true
		}
	}
	forEachConfigRef(&tpl.Spec, func(kind string, name *string) { add(kind, *name) })
	refs := make([]ConfigRef, 0, len(seen))
	for r := range seen {
		refs = append(refs, r)
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].String() < refs[j].String() })
	return refs
}

// PrimaryConfigName is the name of the primary's copy of a config.
func PrimaryConfigName(name string) string { return name + v1alpha1.PrimarySuffix }

// UsePrimaryConfigs rewrites a pod spec's references to tracked configs to
// their primary copies, so that the primary keeps the promoted data while
// the canary runs the new one.
func UsePrimaryConfigs(spec *corev1.PodSpec, tracked map[string]string) {
	forEachConfigRef(spec, func(kind string, name *string) {
		if _, ok := tracked[kind+"/"+*name]; ok {
			*name = PrimaryConfigName(*name)
		}
	})
}

// ConfigDataHash hashes a ConfigMap's or Secret's data.
func ConfigDataHash(data map[string][]byte) string {
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		h.Write([]byte(k + "\x00"))
		h.Write(data[k])
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// forEachConfigRef calls fn with a pointer to every ConfigMap or Secret
// name a pod spec refers to: volumes, projected volumes, env and envFrom of
// every container and init container.
func forEachConfigRef(spec *corev1.PodSpec, fn func(kind string, name *string)) {
	for i := range spec.Volumes {
		v := &spec.Volumes[i]
		if v.ConfigMap != nil {
			fn("ConfigMap", &v.ConfigMap.Name)
		}
		if v.Secret != nil {
			fn("Secret", &v.Secret.SecretName)
		}
		if v.Projected != nil {
			for j := range v.Projected.Sources {
				s := &v.Projected.Sources[j]
				if s.ConfigMap != nil {
					fn("ConfigMap", &s.ConfigMap.Name)
				}
				if s.Secret != nil {
					fn("Secret", &s.Secret.Name)
				}
			}
		}
	}
	containers := make([]*corev1.Container, 0, len(spec.Containers)+len(spec.InitContainers))
	for i := range spec.InitContainers {
		containers = append(containers, &spec.InitContainers[i])
	}
	for i := range spec.Containers {
		containers = append(containers, &spec.Containers[i])
	}
	for _, c := range containers {
		for j := range c.EnvFrom {
			e := &c.EnvFrom[j]
			if e.ConfigMapRef != nil {
				fn("ConfigMap", &e.ConfigMapRef.Name)
			}
			if e.SecretRef != nil {
				fn("Secret", &e.SecretRef.Name)
			}
		}
		for j := range c.Env {
			if vf := c.Env[j].ValueFrom; vf != nil {
				if vf.ConfigMapKeyRef != nil {
					fn("ConfigMap", &vf.ConfigMapKeyRef.Name)
				}
				if vf.SecretKeyRef != nil {
					fn("Secret", &vf.SecretKeyRef.Name)
				}
			}
		}
	}
}
