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

package testobj

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// ServiceWrapper builds a Service.
type ServiceWrapper struct{ corev1.Service }

// MakeService returns a ClusterIP Service selecting app=NAME on port http
// (9898), as the Service target of a Canary or a Service serin generates.
func MakeService(name, namespace string) *ServiceWrapper {
	return &ServiceWrapper{corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: map[string]string{"app": name},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 9898, TargetPort: intstr.FromString("http"), Protocol: corev1.ProtocolTCP}},
		},
	}}
}

// Selector replaces spec.selector.
func (w *ServiceWrapper) Selector(selector map[string]string) *ServiceWrapper {
	w.Spec.Selector = selector
	return w
}

// Annotation sets an annotation.
func (w *ServiceWrapper) Annotation(k, v string) *ServiceWrapper {
	if w.Annotations == nil {
		w.Annotations = map[string]string{}
	}
	w.Annotations[k] = v
	return w
}

// Obj returns the Service.
func (w *ServiceWrapper) Obj() *corev1.Service { return &w.Service }
