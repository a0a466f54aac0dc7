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
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Health is a Deployment's rollout state, as the Deployment controller reports it.
type Health struct {
	// Ready: the latest template runs on all desired replicas, all available.
	Ready bool
	// Failed: the Deployment controller gave up (progress deadline exceeded,
	// or pods cannot be created); waiting longer will not help.
	Failed bool
	// Message says what is missing, for conditions and events.
	Message string
	// Serving is the number of pods ready to serve, of any revision (the
	// Deployment's readyReplicas, a Service's ready endpoints): 0 means a
	// request routed to it fails.
	Serving int32
}

// DeploymentHealth judges a Deployment from its status. readyThreshold is
// the percentage of its updated replicas that must be available (the
// Canary's primaryReadyThreshold or canaryReadyThreshold, 100 by default):
// every desired replica must still run the current template, with no old
// one left, but only that share of them needs to be available. The count
// is rounded up and, for a Deployment with replicas, never below one: a
// Deployment with no available pod is never ready, whatever the threshold.
func DeploymentHealth(d *appsv1.Deployment, readyThreshold int) Health {
	h := deploymentHealth(d, readyThreshold)
	h.Serving = d.Status.ReadyReplicas
	return h
}

func deploymentHealth(d *appsv1.Deployment, readyThreshold int) Health {
	if d.Generation > d.Status.ObservedGeneration {
		return Health{Message: fmt.Sprintf("deployment %s: waiting for the deployment controller to observe generation %d", d.Name, d.Generation)}
	}
	desired := int32(1)
	if d.Spec.Replicas != nil {
		desired = *d.Spec.Replicas
	}
	for _, c := range d.Status.Conditions {
		switch {
		case c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse && c.Reason == "ProgressDeadlineExceeded":
			return Health{Failed: true, Message: fmt.Sprintf("deployment %s exceeded its progress deadline: %s", d.Name, c.Message)}
		case c.Type == appsv1.DeploymentReplicaFailure && c.Status == corev1.ConditionTrue:
			return Health{Failed: true, Message: fmt.Sprintf("deployment %s cannot create pods: %s", d.Name, c.Message)}
		}
	}
	s := d.Status
	threshold := ""
	if readyThreshold < 100 {
		threshold = fmt.Sprintf(" (readyThreshold %d%%)", readyThreshold)
	}
	switch needed := AvailableNeeded(s.UpdatedReplicas, readyThreshold); {
	case s.UpdatedReplicas < desired:
		return Health{Message: fmt.Sprintf("deployment %s: %d of %d replicas updated", d.Name, s.UpdatedReplicas, desired)}
	case s.Replicas > s.UpdatedReplicas:
		return Health{Message: fmt.Sprintf("deployment %s: %d old replicas pending termination", d.Name, s.Replicas-s.UpdatedReplicas)}
	case s.AvailableReplicas < needed && needed < s.UpdatedReplicas:
		return Health{Message: fmt.Sprintf("deployment %s: %d of %d updated replicas available, %d needed%s",
			d.Name, s.AvailableReplicas, s.UpdatedReplicas, needed, threshold)}
	case s.AvailableReplicas < needed:
		return Health{Message: fmt.Sprintf("deployment %s: %d of %d updated replicas available%s", d.Name, s.AvailableReplicas, s.UpdatedReplicas, threshold)}
	}
	return Health{Ready: true, Message: fmt.Sprintf("deployment %s: %d of %d replicas available%s", d.Name, s.AvailableReplicas, desired, threshold)}
}

// AvailableNeeded is how many of updated replicas must be available at
// readyThreshold percent: rounded up, at least one when there are any, and
// all of them at 100 or more.
func AvailableNeeded(updated int32, readyThreshold int) int32 {
	if updated <= 0 {
		return 0
	}
	if readyThreshold >= 100 {
		return updated
	}
	needed := (int64(updated)*int64(readyThreshold) + 99) / 100
	return int32(max(needed, 1))
}

// MayLoseAllReadyPods reports whether rolling the Deployment to a new
// template may leave it with no ready pod for a while: the Recreate
// strategy, or a rolling update whose maxUnavailable covers every replica.
func MayLoseAllReadyPods(d *appsv1.Deployment) bool {
	s := d.Spec.Strategy
	if s.Type == appsv1.RecreateDeploymentStrategyType {
		return true
	}
	replicas := int32(1)
	if d.Spec.Replicas != nil {
		replicas = *d.Spec.Replicas
	}
	if s.RollingUpdate == nil || s.RollingUpdate.MaxUnavailable == nil || replicas == 0 {
		return false // the default maxUnavailable is 25%, rounded down
	}
	unavailable, err := intstr.GetScaledValueFromIntOrPercent(s.RollingUpdate.MaxUnavailable, int(replicas), false)
	return err == nil && int32(unavailable) >= replicas
}
