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

package analysis

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// maxPodsListed bounds one pod-restarts check's read: a workload with
// more pods than this is counted on the first ones (a LIST page), and the
// message says so.
const maxPodsListed = 500

// podRestartsCheck counts the container restarts of side s's pods (the
// canary's, or the primary's in a soak) from the API server, and holds
// the count to thresholdRange.max, 0 without a thresholdRange: a worker
// that serves no request is judged by whether its pods stay up.
func (m *Metrics) podRestartsCheck(ctx context.Context, canary *v1alpha1.Canary, metric v1alpha1.CanaryMetric, s side) MetricResult {
	res := MetricResult{Name: metric.Name}
	limit := 0.0
	if r := metric.ThresholdRange; r != nil {
		res.Min, res.Max = r.Min, r.Max
		if r.Max != nil {
			limit = *r.Max
		}
	} else {
		res.Max = &limit
	}
	fail := func(format string, args ...any) MetricResult {
		res.Message = fmt.Sprintf("metric %s: ", metric.Name) + fmt.Sprintf(format, args...)
		return res
	}
	pods, truncated, err := m.sidePods(ctx, canary, s)
	if err != nil {
		return fail("%v", err)
	}
	count := CountRestarts(pods)
	count.Truncated = truncated
	v := float64(count.Restarts)
	res.Value, res.HasValue = v, true
	what := fmt.Sprintf("%d restarts of the %s's %d pods", count.Restarts, s, len(pods))
	if count.Truncated {
		what += fmt.Sprintf(" (the first %d listed)", maxPodsListed)
	}
	if r := metric.ThresholdRange; r != nil && r.Min != nil && v < *r.Min {
		return fail("%s < %g (thresholdRange.min)", what, *r.Min)
	}
	if v > limit {
		bound := "thresholdRange.max"
		if metric.ThresholdRange == nil || metric.ThresholdRange.Max == nil {
			bound = "no restart allowed without thresholdRange.max"
		}
		return fail("%s > %g (%s)%s", what, limit, bound, count.detail())
	}
	res.Passed = true
	res.Message = fmt.Sprintf("metric %s: %s", metric.Name, what)
	return res
}

// sidePods lists the pods of side s's workload, by its selector, live
// (the agent caches no pods); truncated when it has more than
// maxPodsListed.
func (m *Metrics) sidePods(ctx context.Context, canary *v1alpha1.Canary, s side) (pods []corev1.Pod, truncated bool, err error) {
	if m.Pods == nil {
		return nil, false, errors.New("the agent reads no pods (analysis.Metrics.Pods is not set)")
	}
	name := canary.Spec.TargetRef.Name
	if s == primarySide {
		name = canary.GetPrimaryName()
	}
	key := types.NamespacedName{Namespace: canary.Namespace, Name: name}
	var selector *metav1.LabelSelector
	switch canary.Spec.TargetRef.Kind {
	case v1alpha1.DeploymentKind:
		d := &appsv1.Deployment{}
		if err := m.Reader.Get(ctx, key, d); err != nil {
			return nil, false, fmt.Errorf("failed to read deployment %s: %w", key, err)
		}
		selector = d.Spec.Selector
	case v1alpha1.DaemonSetKind:
		d := &appsv1.DaemonSet{}
		if err := m.Reader.Get(ctx, key, d); err != nil {
			return nil, false, fmt.Errorf("failed to read daemonset %s: %w", key, err)
		}
		selector = d.Spec.Selector
	case v1alpha1.StatefulSetKind:
		// Rolled out in place: the canary's pods are those of the update
		// revision, the primary's the others.
		key.Name = canary.Spec.TargetRef.Name
		d := &appsv1.StatefulSet{}
		if err := m.Reader.Get(ctx, key, d); err != nil {
			return nil, false, fmt.Errorf("failed to read statefulset %s: %w", key, err)
		}
		pods, truncated, err := m.listPods(ctx, canary.Namespace, key, d.Spec.Selector)
		if err != nil {
			return nil, false, err
		}
		var side []corev1.Pod
		for _, p := range pods {
			canaryPod := d.Status.UpdateRevision != d.Status.CurrentRevision && p.Labels[appsv1.ControllerRevisionHashLabelKey] == d.Status.UpdateRevision
			if canaryPod == (s == canarySide) {
				side = append(side, p)
			}
		}
		return side, truncated, nil
	default:
		return nil, false, fmt.Errorf("pod-restarts counts the pods of a Deployment, a DaemonSet or a StatefulSet, and the target is a %s", canary.Spec.TargetRef.Kind)
	}
	return m.listPods(ctx, canary.Namespace, key, selector)
}

// listPods lists the pods of workload key by its selector, at most
// maxPodsListed; truncated when there were more.
func (m *Metrics) listPods(ctx context.Context, namespace string, key types.NamespacedName, selector *metav1.LabelSelector) ([]corev1.Pod, bool, error) {
	sel, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil || sel.Empty() {
		return nil, false, fmt.Errorf("workload %s has no usable pod selector", key)
	}
	var list corev1.PodList
	if err := m.Pods.List(ctx, &list, client.InNamespace(namespace),
		client.MatchingLabelsSelector{Selector: sel}, client.Limit(maxPodsListed)); err != nil {
		return nil, false, fmt.Errorf("failed to list the pods of %s: %w", key, err)
	}
	return list.Items, list.Continue != "", nil
}

// Restarts are the restarts of a set of pods, and what caused the last
// one of each container, for the check's message.
type Restarts struct {
	// Restarts is the sum of the pods' containers' (and init containers')
	// restart counts.
	Restarts int
	// OOMKilled, CrashLooping and Failing name the pods whose last
	// termination was an OOM kill, that wait in CrashLoopBackOff, or whose
	// last termination was another error.
	OOMKilled, CrashLooping, Failing []string
	// Truncated is true when there were more pods than were listed.
	Truncated bool
}

// CountRestarts counts the restarts of pods.
func CountRestarts(pods []corev1.Pod) Restarts {
	var r Restarts
	for i := range pods {
		p := &pods[i]
		oom, loop, failing := false, false, false
		for _, c := range slices.Concat(p.Status.InitContainerStatuses, p.Status.ContainerStatuses) {
			r.Restarts += int(c.RestartCount)
			if t := c.LastTerminationState.Terminated; t != nil && c.RestartCount > 0 {
				if t.Reason == "OOMKilled" {
					oom = true
				} else if t.ExitCode != 0 {
					failing = true
				}
			}
			if w := c.State.Waiting; w != nil && w.Reason == "CrashLoopBackOff" {
				loop = true
			}
		}
		switch {
		case oom:
			r.OOMKilled = append(r.OOMKilled, p.Name)
		case loop:
			r.CrashLooping = append(r.CrashLooping, p.Name)
		case failing:
			r.Failing = append(r.Failing, p.Name)
		}
	}
	return r
}

// detail names the pods behind the restarts, at most 3 of each cause.
func (r Restarts) detail() string {
	var parts []string
	add := func(what string, pods []string) {
		if len(pods) == 0 {
			return
		}
		shown := pods[:min(len(pods), 3)]
		more := ""
		if len(pods) > len(shown) {
			more = fmt.Sprintf(" and %d more", len(pods)-len(shown))
		}
		parts = append(parts, fmt.Sprintf("%s: %s%s", what, strings.Join(shown, ", "), more))
	}
	add("OOMKilled", r.OOMKilled)
	add("CrashLoopBackOff", r.CrashLooping)
	add("exited with an error", r.Failing)
	if len(parts) == 0 {
		return ""
	}
	return "; " + strings.Join(parts, "; ")
}

// statefulSetPods is {{ pods }} of side s of a StatefulSet target: its
// ordinals from the partition up (the canary's, the update revision's) or
// below it (the primary's), "db-(3|2)"; a pattern that matches no pod
// name when the side has none. "" for the other kinds, whose pods are
// named by podNamePattern.
func (m *Metrics) statefulSetPods(ctx context.Context, canary *v1alpha1.Canary, s side) (string, error) {
	if canary.Spec.TargetRef.Kind != v1alpha1.StatefulSetKind {
		return "", nil
	}
	sts := &appsv1.StatefulSet{}
	key := types.NamespacedName{Namespace: canary.Namespace, Name: canary.Spec.TargetRef.Name}
	if err := m.Reader.Get(ctx, key, sts); err != nil {
		return "", fmt.Errorf("failed to read statefulset %s: %w", key, err)
	}
	return StatefulSetPodPattern(sts, s == canarySide), nil
}

// StatefulSetPodPattern is a regular expression of the names of a
// StatefulSet's pods of the update revision (canary) or the others: its
// ordinals from the partition up, or below it.
func StatefulSetPodPattern(sts *appsv1.StatefulSet, canary bool) string {
	replicas := ptr.Deref(sts.Spec.Replicas, 1)
	partition := int32(0)
	if ru := sts.Spec.UpdateStrategy.RollingUpdate; ru != nil {
		partition = min(ptr.Deref(ru.Partition, 0), replicas)
	}
	if sts.Status.UpdateRevision == sts.Status.CurrentRevision {
		// Every pod runs the same revision: it is the primary's.
		partition = replicas
	}
	from, to := int32(0), partition
	if canary {
		from, to = partition, replicas
	}
	var ordinals []string
	for i := to - 1; i >= from; i-- {
		ordinals = append(ordinals, strconv.Itoa(int(i)))
	}
	if len(ordinals) == 0 {
		// No pod of the side: a name no pod has (a pod's ordinal is a number).
		return regexp.QuoteMeta(sts.Name) + "-none"
	}
	return regexp.QuoteMeta(sts.Name) + "-(" + strings.Join(ordinals, "|") + ")"
}
