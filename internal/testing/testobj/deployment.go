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
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// DeploymentWrapper builds a Deployment.
type DeploymentWrapper struct{ appsv1.Deployment }

// MakeDeployment returns a one-replica Deployment selecting app=NAME, with
// one container listening on http (9898).
func MakeDeployment(name, namespace string) *DeploymentWrapper {
	labels := map[string]string{"app": name}
	return &DeploymentWrapper{appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: map[string]string{"app": name}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name:  "app",
					Image: "ghcr.io/stefanprodan/podinfo:6.0.0",
					Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 9898, Protocol: corev1.ProtocolTCP}},
				}}},
			},
		},
	}}
}

// Replicas sets spec.replicas.
func (w *DeploymentWrapper) Replicas(n int32) *DeploymentWrapper {
	w.Spec.Replicas = ptr.To(n)
	return w
}

// Image sets the image of the first container.
func (w *DeploymentWrapper) Image(image string) *DeploymentWrapper {
	w.Spec.Template.Spec.Containers[0].Image = image
	return w
}

// Label sets a label on the object and its pod template.
func (w *DeploymentWrapper) Label(k, v string) *DeploymentWrapper {
	w.Labels[k] = v
	w.Spec.Template.Labels[k] = v
	return w
}

// PodLabel sets a label on the pod template only.
func (w *DeploymentWrapper) PodLabel(k, v string) *DeploymentWrapper {
	w.Spec.Template.Labels[k] = v
	return w
}

// PodAnnotation sets an annotation on the pod template.
func (w *DeploymentWrapper) PodAnnotation(k, v string) *DeploymentWrapper {
	if w.Spec.Template.Annotations == nil {
		w.Spec.Template.Annotations = map[string]string{}
	}
	w.Spec.Template.Annotations[k] = v
	return w
}

// ProgressDeadlineSeconds sets spec.progressDeadlineSeconds.
func (w *DeploymentWrapper) ProgressDeadlineSeconds(s int32) *DeploymentWrapper {
	w.Spec.ProgressDeadlineSeconds = ptr.To(s)
	return w
}

// Recreate sets the Recreate strategy: every old pod goes before a new one
// starts.
func (w *DeploymentWrapper) Recreate() *DeploymentWrapper {
	w.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	return w
}

// EnvFromConfigMap makes the first container read its environment from
// the ConfigMap name, a config serin tracks.
func (w *DeploymentWrapper) EnvFromConfigMap(name string) *DeploymentWrapper {
	c := &w.Spec.Template.Spec.Containers[0]
	c.EnvFrom = append(c.EnvFrom, corev1.EnvFromSource{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}})
	return w
}

// Obj returns the Deployment.
func (w *DeploymentWrapper) Obj() *appsv1.Deployment { return &w.Deployment }
