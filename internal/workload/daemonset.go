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
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// A DaemonSet target runs one pod per node and has no replicas to scale:
// serin "scales it to zero" with a node selector no node matches, as
// Flagger does (with its flagger.app/scale-to-zero), and scales it up by
// removing it. The primary is a DaemonSet <name>-primary on the same nodes.

const (
	// ScaleToZeroNodeSelector is the node selector key serin adds to the
	// target DaemonSet's pod template to take all its pods away: no node
	// carries it (a node labelled with it would run the canary's pods).
	ScaleToZeroNodeSelector = "serin.dev/scale-to-zero"
	// scaleToZeroValue is its value.
	scaleToZeroValue = "true"
)

// ValidateDaemonSetTarget returns an error that says what to fix when a
// DaemonSet cannot be rolled out by a Canary.
func ValidateDaemonSetTarget(target *appsv1.DaemonSet) error {
	sel := target.Spec.Selector
	if sel != nil && len(sel.MatchExpressions) > 0 {
		return fmt.Errorf("daemonset %s uses spec.selector.matchExpressions: serin supports spec.selector.matchLabels only", target.Name)
	}
	if sel == nil || len(sel.MatchLabels) == 0 {
		return fmt.Errorf("daemonset %s has no spec.selector.matchLabels: serin needs label selectors to tell primary and canary pods apart", target.Name)
	}
	if t := target.Spec.UpdateStrategy.Type; t != "" && t != appsv1.RollingUpdateDaemonSetStrategyType {
		return fmt.Errorf("daemonset %s uses updateStrategy %s: the primary's pods would not be replaced on promotion; use RollingUpdate", target.Name, t)
	}
	return nil
}

// DaemonSetTemplate returns the target's pod template as Git has it:
// without the node selector serin adds to scale it to zero. The revision's
// spec hash and the primary's template are taken from it.
func DaemonSetTemplate(target *appsv1.DaemonSet) *corev1.PodTemplateSpec {
	tpl := target.Spec.Template.DeepCopy()
	delete(tpl.Spec.NodeSelector, ScaleToZeroNodeSelector)
	if len(tpl.Spec.NodeSelector) == 0 {
		tpl.Spec.NodeSelector = nil
	}
	return tpl
}

// DaemonSetScaledToZero reports whether serin took the target's pods away.
func DaemonSetScaledToZero(target *appsv1.DaemonSet) bool {
	_, ok := target.Spec.Template.Spec.NodeSelector[ScaleToZeroNodeSelector]
	return ok
}

// ScaleDaemonSet adds (zero) or removes the node selector that takes every
// pod of the target away, and reports whether that changed the template.
func ScaleDaemonSet(target *appsv1.DaemonSet, zero bool) bool {
	if DaemonSetScaledToZero(target) == zero {
		return false
	}
	sel := &target.Spec.Template.Spec.NodeSelector
	if zero {
		if *sel == nil {
			*sel = map[string]string{}
		}
		(*sel)[ScaleToZeroNodeSelector] = scaleToZeroValue
		return true
	}
	delete(*sel, ScaleToZeroNodeSelector)
	if len(*sel) == 0 {
		*sel = nil
	}
	return true
}

// DaemonSetReplicas stands for a Deployment's spec.replicas: 0 when serin
// scaled the target to zero, else the nodes it runs on (at least 1).
func DaemonSetReplicas(target *appsv1.DaemonSet) int32 {
	if DaemonSetScaledToZero(target) {
		return 0
	}
	return max(target.Status.DesiredNumberScheduled, 1)
}

// DaemonSetPrimarySelector returns the label selector of the primary's pods.
func DaemonSetPrimarySelector(target *appsv1.DaemonSet) map[string]string {
	return primarySelector(target.Spec.Selector.MatchLabels)
}

// PrimaryDaemonSetTemplate returns the target's pod template (as Git has
// it) with the primary's selector labels and the revision's spec hash, as
// the primary runs it.
func PrimaryDaemonSetTemplate(target *appsv1.DaemonSet, tracked map[string]string) corev1.PodTemplateSpec {
	return primaryPodTemplate(DaemonSetTemplate(target), target.Spec.Selector.MatchLabels, tracked)
}

// MutatePrimaryDaemonSet sets on primary everything serin owns of it:
// metadata, the selector, the update strategy and, when promote is true or
// the primary is new, the target's pod template (as Git has it) using the
// primary's copies of the tracked configs.
func MutatePrimaryDaemonSet(canary *v1alpha1.Canary, target, primary *appsv1.DaemonSet, promote bool, tracked map[string]string) {
	primary.Labels, primary.Annotations = mergeGenerated(canary, primary, target.Labels, target.Annotations)
	if primary.Spec.Selector == nil {
		// The selector of a DaemonSet is immutable; set it once.
		primary.Spec.Selector = &metav1.LabelSelector{MatchLabels: DaemonSetPrimarySelector(target)}
	}
	if promote || primary.CreationTimestamp.IsZero() {
		primary.Spec.Template = PrimaryDaemonSetTemplate(target, tracked)
	}
	primary.Spec.UpdateStrategy = target.Spec.UpdateStrategy
	primary.Spec.MinReadySeconds = target.Spec.MinReadySeconds
	primary.Spec.RevisionHistoryLimit = target.Spec.RevisionHistoryLimit
}

// DaemonSetHealth judges a DaemonSet from its status, as `kubectl rollout
// status` does: every node that should run a pod runs the current
// template, and readyThreshold percent of them (rounded up, at least one)
// are available. A DaemonSet has no progress deadline of its own: the
// Canary's progressDeadlineSeconds bounds the wait.
func DaemonSetHealth(d *appsv1.DaemonSet, readyThreshold int) Health {
	h := daemonSetHealth(d, readyThreshold)
	h.Serving = d.Status.NumberReady
	return h
}

func daemonSetHealth(d *appsv1.DaemonSet, readyThreshold int) Health {
	if d.Generation > d.Status.ObservedGeneration {
		return Health{Message: fmt.Sprintf("daemonset %s: waiting for the daemonset controller to observe generation %d", d.Name, d.Generation)}
	}
	s := d.Status
	threshold := ""
	if readyThreshold < 100 {
		threshold = fmt.Sprintf(" (readyThreshold %d%%)", readyThreshold)
	}
	switch needed := AvailableNeeded(s.DesiredNumberScheduled, readyThreshold); {
	case s.UpdatedNumberScheduled < s.DesiredNumberScheduled:
		return Health{Message: fmt.Sprintf("daemonset %s: %d of %d pods updated", d.Name, s.UpdatedNumberScheduled, s.DesiredNumberScheduled)}
	case s.NumberAvailable < needed && needed < s.DesiredNumberScheduled:
		return Health{Message: fmt.Sprintf("daemonset %s: %d of %d pods available, %d needed%s",
			d.Name, s.NumberAvailable, s.DesiredNumberScheduled, needed, threshold)}
	case s.NumberAvailable < needed:
		return Health{Message: fmt.Sprintf("daemonset %s: %d of %d pods available%s", d.Name, s.NumberAvailable, s.DesiredNumberScheduled, threshold)}
	}
	return Health{Ready: true, Message: fmt.Sprintf("daemonset %s: %d of %d pods available%s", d.Name, s.NumberAvailable, s.DesiredNumberScheduled, threshold)}
}
