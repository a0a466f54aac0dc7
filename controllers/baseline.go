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

package controllers

import (
	"context"
	"fmt"
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/internal/workload"
)

// The baseline (analysis.judge.baseline) of a Deployment target:
// <target>-baseline runs the primary's pod template at the canary's
// replicas during an analysis, behind <service>-baseline. What happens to
// it is decided in internal/rollout (baseline.go); this file reads it and
// says what serin wants of it.

// readBaseline reads the baseline Deployment the Canary controls from the
// cache, and what rollout needs of it to route it (rollout.BaselineRouted):
// whether it exists (one scaled to zero after its analysis does not: it
// waits for the next) and its health. nil without one (or one of another
// controller, which serin never touches: the next write of it stalls).
func (r *CanaryReconciler) readBaseline(ctx context.Context, obj *v1alpha1.Canary) (*appsv1.Deployment, rollout.Baseline, error) {
	baseline := &appsv1.Deployment{}
	found, err := r.getOptional(ctx, obj.Namespace, obj.GetBaselineName(), baseline)
	if err != nil || !found || !metav1.IsControlledBy(baseline, obj) {
		return nil, rollout.Baseline{}, err
	}
	return baseline, rollout.Baseline{Exists: ptr.Deref(baseline.Spec.Replicas, 1) > 0,
		Health: workload.DeploymentHealth(baseline, obj.GetCanaryReadyThreshold())}, nil
}

// observeBaseline fills obs.Baseline for a Canary with
// analysis.judge.baseline (the routes fill Routed): the baseline, its
// health, and whether it and its Service are what the analysis under way
// wants (desiredBaseline). Nothing is read without analysis.judge.baseline.
func (r *CanaryReconciler) observeBaseline(ctx context.Context, obj *v1alpha1.Canary, target, primary *appsv1.Deployment, obs *rollout.Observation) error {
	if !obj.WantsBaseline() {
		return nil
	}
	baseline, b, err := r.readBaseline(ctx, obj)
	if err != nil || baseline == nil || primary == nil {
		obs.Baseline = b
		return err
	}
	want, svc := desiredBaseline(obj, target, primary, baselineReplicas(obs.Target, primary), obj.Status.LastAppliedSpec)
	b.InSync = workload.BaselineInSync(baseline, want)
	if b.InSync {
		got, err := r.baselineService(ctx, obj)
		if err != nil {
			return err
		}
		b.InSync = got != nil && maps.Equal(got.Spec.Selector, svc.selector) && portsEqual(got.Spec.Ports, svc.ports)
	}
	obs.Baseline = b
	return nil
}

// baselineReplicas is the canary's replica count: the target's, once
// scaled up, else the primary's (the canary's to come), at least one.
func baselineReplicas(target rollout.Target, primary *appsv1.Deployment) int32 {
	switch {
	case target.Replicas > 0:
		return target.Replicas
	case primary.Spec.Replicas != nil && *primary.Spec.Replicas > 0:
		return *primary.Spec.Replicas
	}
	return 1
}

// desiredBaseline is the baseline Deployment and Service the analysis of
// revision analysed wants: the primary's template and its Service's ports.
func desiredBaseline(obj *v1alpha1.Canary, target, primary *appsv1.Deployment, replicas int32, analysed string) (*appsv1.Deployment, desiredService) {
	selector := workload.BaselineSelector(target)
	svc := desiredService{
		name:     obj.GetBaselineServiceName(),
		selector: selector,
		initial:  selector,
		ports:    workload.ServicePorts(obj, &target.Spec.Template),
	}
	return workload.DesiredBaseline(obj, target, primary, replicas, analysed), svc
}

// baselineRouted tells the router whether to give the baseline the
// canary's weight (rollout.BaselineRouted), from the cache, as observe
// read it.
func (r *CanaryReconciler) baselineRouted(ctx context.Context, obj *v1alpha1.Canary) (bool, error) {
	if !obj.WantsBaseline() {
		return false, nil
	}
	_, b, err := r.readBaseline(ctx, obj)
	if err != nil {
		return false, fmt.Errorf("failed to read the baseline: %w", err)
	}
	return rollout.BaselineRouted(obj, b), nil
}

// baselineService reads the baseline's Service, when the Canary controls it.
func (r *CanaryReconciler) baselineService(ctx context.Context, obj *v1alpha1.Canary) (*corev1.Service, error) {
	svc := &corev1.Service{}
	found, err := r.getOptional(ctx, obj.Namespace, obj.GetBaselineServiceName(), svc)
	if err != nil || !found || !metav1.IsControlledBy(svc, obj) {
		return nil, err
	}
	return svc, nil
}
