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
)

// DaemonSetWrapper builds a DaemonSet.
type DaemonSetWrapper struct{ appsv1.DaemonSet }

// MakeDaemonSet returns a DaemonSet selecting app=NAME, with one container
// listening on http (9898), the pod template of MakeDeployment.
func MakeDaemonSet(name, namespace string) *DaemonSetWrapper {
	d := MakeDeployment(name, namespace).Obj()
	return &DaemonSetWrapper{appsv1.DaemonSet{
		ObjectMeta: d.ObjectMeta,
		Spec: appsv1.DaemonSetSpec{
			Selector:       d.Spec.Selector,
			Template:       d.Spec.Template,
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType},
		},
	}}
}

// Image sets the image of the first container.
func (w *DaemonSetWrapper) Image(image string) *DaemonSetWrapper {
	w.Spec.Template.Spec.Containers[0].Image = image
	return w
}

// Label sets a label on the object and its pod template.
func (w *DaemonSetWrapper) Label(k, v string) *DaemonSetWrapper {
	w.Labels[k] = v
	w.Spec.Template.Labels[k] = v
	return w
}

// NodeSelector sets a node selector of the pod template.
func (w *DaemonSetWrapper) NodeSelector(k, v string) *DaemonSetWrapper {
	if w.Spec.Template.Spec.NodeSelector == nil {
		w.Spec.Template.Spec.NodeSelector = map[string]string{}
	}
	w.Spec.Template.Spec.NodeSelector[k] = v
	return w
}

// OnDelete sets the OnDelete update strategy: pods are replaced only when
// someone deletes them.
func (w *DaemonSetWrapper) OnDelete() *DaemonSetWrapper {
	w.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}
	return w
}

// Scheduled sets a status observed at the current generation: desired
// nodes, with updated and ready (also available) pods on them.
func (w *DaemonSetWrapper) Scheduled(desired, updated, ready int32) *DaemonSetWrapper {
	w.Status = appsv1.DaemonSetStatus{
		ObservedGeneration: w.Generation, DesiredNumberScheduled: desired, CurrentNumberScheduled: desired,
		UpdatedNumberScheduled: updated, NumberReady: ready, NumberAvailable: ready, NumberUnavailable: desired - ready,
	}
	return w
}

// Obj returns the DaemonSet.
func (w *DaemonSetWrapper) Obj() *appsv1.DaemonSet { return &w.DaemonSet }
