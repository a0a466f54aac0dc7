package controllers

import (
	"context"
	"fmt"
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/internal/workload"
)

// specHashAnnotation records on the primary which target revision it runs.
const specHashAnnotation = "serin.dev/spec-hash"

// observe reads the Canary's world from the informer cache into an
// Observation. It makes no decision and writes nothing.
func (r *CanaryReconciler) observe(ctx context.Context, obj *v1alpha1.Canary) (rollout.Observation, error) {
	obs := rollout.Observation{Now: r.now()}
	ref := obj.Spec.TargetRef
	if ref.Kind != "Deployment" {
		obs.Target = rollout.Target{Found: true, Invalid: fmt.Sprintf("targetRef.kind %s is not supported yet: use a Deployment", ref.Kind)}
		return obs, nil
	}

	target := &appsv1.Deployment{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: ref.Name}, target); err != nil {
		if apierrors.IsNotFound(err) {
			return obs, nil
		}
		return obs, fmt.Errorf("failed to get target: %w", err)
	}
	obs.Target = rollout.Target{Found: true, Replicas: workload.TargetReplicas(target)}
	if target.Spec.Replicas != nil {
		obs.Target.Replicas = *target.Spec.Replicas
	}
	if err := workload.ValidateTarget(target); err != nil {
		obs.Target.Invalid = err.Error()
		return obs, nil
	}
	obs.Target.SpecHash = workload.SpecHash(&target.Spec.Template, nil)

	primary := &appsv1.Deployment{}
	switch err := r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: obj.GetPrimaryName()}, primary); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return obs, fmt.Errorf("failed to get primary: %w", err)
	default:
		obs.Primary = rollout.Primary{
			Exists:   true,
			SpecHash: primary.Annotations[specHashAnnotation],
			Health:   workload.DeploymentHealth(primary),
		}
	}

	inSync, err := r.servicesInSync(ctx, obj, target)
	if err != nil {
		return obs, err
	}
	obs.ServicesInSync = inSync
	return obs, nil
}

// servicesInSync reports whether the apex, primary and canary Services
// exist with the selectors and ports serin wants.
func (r *CanaryReconciler) servicesInSync(ctx context.Context, obj *v1alpha1.Canary, target *appsv1.Deployment) (bool, error) {
	for _, want := range desiredServices(obj, target) {
		got := &corev1.Service{}
		if err := r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: want.name}, got); err != nil {
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			return false, fmt.Errorf("failed to get service %s: %w", want.name, err)
		}
		if !maps.Equal(got.Spec.Selector, want.selector) || !portsEqual(got.Spec.Ports, want.ports) {
			return false, nil
		}
	}
	return true, nil
}

func portsEqual(got, want []corev1.ServicePort) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range want {
		g := got[i]
		g.NodePort = want[i].NodePort
		if !equality.Semantic.DeepEqual(g, want[i]) {
			return false
		}
	}
	return true
}

// desiredService is one Service serin generates.
type desiredService struct {
	name     string
	selector map[string]string
	ports    []corev1.ServicePort
}

// desiredServices returns the apex (selecting the primary until routing
// takes over), primary and canary Services of a Deployment target.
func desiredServices(obj *v1alpha1.Canary, target *appsv1.Deployment) []desiredService {
	ports := workload.ServicePorts(obj, &target.Spec.Template)
	primarySel := workload.PrimarySelector(target)
	return []desiredService{
		{name: obj.GetServiceName(), selector: primarySel, ports: ports},
		{name: obj.GetPrimaryServiceName(), selector: primarySel, ports: ports},
		{name: obj.GetCanaryServiceName(), selector: maps.Clone(target.Spec.Selector.MatchLabels), ports: ports},
	}
}
