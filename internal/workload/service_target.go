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
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// PreviousSpecAnnotation keeps, on a Service target's primary, the spec it
// served before the last promotion: a Service has no ReplicaSet history to
// restore from.
const PreviousSpecAnnotation = "serin.dev/previous-spec"

// ServiceBackend is the part of a Service target's spec that makes a
// revision: where it sends traffic.
type ServiceBackend struct {
	Selector map[string]string    `json:"selector,omitempty"`
	Ports    []corev1.ServicePort `json:"ports,omitempty"`
}

// BackendOf returns a Service's backend, without the API server's defaults
// that differ between copies (nodePorts).
func BackendOf(svc *corev1.Service) ServiceBackend {
	ports := make([]corev1.ServicePort, len(svc.Spec.Ports))
	for i, p := range svc.Spec.Ports {
		p.NodePort = 0
		ports[i] = p
	}
	return ServiceBackend{Selector: maps.Clone(svc.Spec.Selector), Ports: ports}
}

// Hash identifies a Service target's revision.
func (b ServiceBackend) Hash() string {
	data, _ := json.Marshal(b)
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])[:16]
}

// ValidateServiceTarget says what to fix when a Service cannot be rolled out.
func ValidateServiceTarget(svc *corev1.Service) error {
	if len(svc.Spec.Selector) == 0 {
		return fmt.Errorf("service %s has no selector: serin rolls out a Service by copying its selector and ports to %s%s and %s%s",
			svc.Name, svc.Name, v1alpha1.PrimarySuffix, svc.Name, v1alpha1.CanarySuffix)
	}
	return nil
}

// MutateServiceCopy sets a generated copy of a Service target to a backend,
// with the Canary's custom metadata for it.
func MutateServiceCopy(canary *v1alpha1.Canary, svc *corev1.Service, b ServiceBackend, custom *v1alpha1.CustomMetadata) {
	svc.Labels, svc.Annotations = mergeGenerated(canary, svc, custom.GetLabels(), custom.GetAnnotations())
	svc.Spec.Selector = maps.Clone(b.Selector)
	if svc.Spec.Type == "" {
		svc.Spec.Type = corev1.ServiceTypeClusterIP
	}
	svc.Spec.Ports = append([]corev1.ServicePort(nil), b.Ports...)
}

// MutateMetadata sets the Canary's custom metadata on a generated object,
// under serin's own labels and annotations, keeping what others added.
func MutateMetadata(canary *v1alpha1.Canary, obj metav1.Object, custom *v1alpha1.CustomMetadata) {
	labels, annotations := mergeGenerated(canary, obj, custom.GetLabels(), custom.GetAnnotations())
	obj.SetLabels(labels)
	obj.SetAnnotations(annotations)
}

// LeavingEndpoints counts the endpoints of slices that may still answer
// for a workload of ready pods: those that serve while their pod
// terminates (conditions.terminating and serving, or ready when serving is
// not published), and the ready ones beyond ready (the endpoints of pods
// the workload no longer counts, not updated yet). These are pods on
// their way out, to which a data plane may still route a request.
func LeavingEndpoints(slices []discoveryv1.EndpointSlice, ready int32) int32 {
	var leaving, serving int32
	for _, s := range slices {
		for _, e := range s.Endpoints {
			c := e.Conditions
			switch {
			case ptr.Deref(c.Terminating, false):
				if ptr.Deref(c.Serving, ptr.Deref(c.Ready, false)) {
					leaving++
				}
			case ptr.Deref(c.Ready, false):
				serving++
			}
		}
	}
	return leaving + max(serving-ready, 0)
}

// EndpointsChangedAt is when the last change of the pods that slices
// reflect happened (the endpointslice controller's
// endpoints.kubernetes.io/last-change-trigger-time): the data plane
// applies it some time after. Zero when no slice says.
func EndpointsChangedAt(slices []discoveryv1.EndpointSlice) time.Time {
	var last time.Time
	for _, s := range slices {
		t, err := time.Parse(time.RFC3339Nano, s.Annotations[corev1.EndpointsLastChangeTriggerTime])
		if err == nil && t.After(last) {
			last = t
		}
	}
	return last
}

// EndpointsKey is a canonical list of the endpoints of slices and their
// conditions: it changes whenever the endpoints a data plane routes to do.
func EndpointsKey(endpointSlices []discoveryv1.EndpointSlice) string {
	var keys []string
	for _, s := range endpointSlices {
		for _, e := range s.Endpoints {
			c := e.Conditions
			keys = append(keys, fmt.Sprintf("%s/%v/%v/%v", strings.Join(e.Addresses, ","),
				ptr.Deref(c.Ready, false), ptr.Deref(c.Serving, false), ptr.Deref(c.Terminating, false)))
		}
	}
	slices.Sort(keys)
	return strings.Join(keys, " ")
}

// EndpointsHealth judges a Service by its ready endpoints, as the
// endpointslice controller publishes them.
func EndpointsHealth(name string, slices []discoveryv1.EndpointSlice) Health {
	ready := 0
	for _, s := range slices {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && *e.Conditions.Ready {
				ready++
			}
		}
	}
	if ready == 0 {
		return Health{Message: fmt.Sprintf("service %s has no ready endpoint", name)}
	}
	return Health{Ready: true, Serving: int32(ready), Message: fmt.Sprintf("service %s has %d ready endpoints", name, ready)}
}
