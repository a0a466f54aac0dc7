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
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestConfigRefs_AndPrimaryCopies(t *testing.T) {
	spec := corev1.PodSpec{
		Volumes: []corev1.Volume{
			{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"}}}},
			{Name: "tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "app-tls"}}},
			{Name: "all", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "extra"}}},
			}}}},
		},
		InitContainers: []corev1.Container{{EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "init-env"}}}}}},
		Containers: []corev1.Container{{Env: []corev1.EnvVar{{Name: "K", ValueFrom: &corev1.EnvVarSource{
			ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"}, Key: "k"}}}}}},
	}
	tpl := &corev1.PodTemplateSpec{Spec: spec}
	want := []ConfigRef{{"ConfigMap", "app-config"}, {"ConfigMap", "extra"}, {"Secret", "app-tls"}, {"Secret", "init-env"}}
	if diff := cmp.Diff(want, ConfigRefs(tpl)); diff != "" {
		t.Errorf("ConfigRefs (-want +got):\n%s", diff)
	}

	UsePrimaryConfigs(&tpl.Spec, map[string]string{"ConfigMap/app-config": "h1", "Secret/app-tls": "h2"})
	got := ConfigRefs(tpl)
	want = []ConfigRef{{"ConfigMap", "app-config-primary"}, {"ConfigMap", "extra"}, {"Secret", "app-tls-primary"}, {"Secret", "init-env"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after UsePrimaryConfigs, untracked refs stay (-want +got):\n%s", diff)
	}
}

func TestConfigDataHash(t *testing.T) {
	a := ConfigDataHash(map[string][]byte{"a": []byte("1"), "b": []byte("2")})
	if a != ConfigDataHash(map[string][]byte{"b": []byte("2"), "a": []byte("1")}) {
		t.Error("key order changed the hash")
	}
	if a == ConfigDataHash(map[string][]byte{"a": []byte("1"), "b": []byte("3")}) {
		t.Error("a data change kept the hash")
	}
	if ConfigDataHash(map[string][]byte{"ab": []byte("")}) == ConfigDataHash(map[string][]byte{"a": []byte("b")}) {
		t.Error("keys and values must not run together")
	}
}

func TestParseConfigRef(t *testing.T) {
	for key, want := range map[string]bool{"ConfigMap/app": true, "Secret/tls": true, "Pod/x": false, "ConfigMap/": false, "nokind": false} {
		ref, ok := ParseConfigRef(key)
		if ok != want || (ok && ref.String() != key) {
			t.Errorf("ParseConfigRef(%q) = %v, %v", key, ref, ok)
		}
	}
}
