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

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// ServicePorts returns the ports of the generated Services: spec.service's
// port first, then, with portDiscovery, every other TCP container port of
// the pod template.
func ServicePorts(canary *v1alpha1.Canary, tpl *corev1.PodTemplateSpec) []corev1.ServicePort {
	svc := canary.Spec.Service
	target := intstr.FromInt32(svc.Port)
	if svc.TargetPort != nil {
		target = *svc.TargetPort
	}
	ports := []corev1.ServicePort{{
		Name:       canary.GetPortName(),
		Protocol:   corev1.ProtocolTCP,
		Port:       svc.Port,
		TargetPort: target,
	}}
	if svc.AppProtocol != "" {
		ports[0].AppProtocol = ptr.To(svc.AppProtocol)
	}
	if !svc.PortDiscovery || tpl == nil {
		return ports
	}
	// A Service refuses two ports of one name or number: a discovered port
	// that clashes with one already there is renamed, or left out.
	names, numbers := map[string]bool{ports[0].Name: true}, map[int32]bool{svc.Port: true}
	for _, c := range tpl.Spec.Containers {
		for _, p := range c.Ports {
			if p.Protocol != "" && p.Protocol != corev1.ProtocolTCP {
				continue
			}
			if numbers[p.ContainerPort] || (target.Type == intstr.String && p.Name == target.StrVal) ||
				(target.Type == intstr.Int && p.ContainerPort == target.IntVal) {
				continue
			}
			name := p.Name
			if name == "" || names[name] {
				name = fmt.Sprintf("tcp-%d", p.ContainerPort)
			}
			if names[name] {
				continue
			}
			names[name], numbers[p.ContainerPort] = true, true
			ports = append(ports, corev1.ServicePort{
				Name:       name,
				Protocol:   corev1.ProtocolTCP,
				Port:       p.ContainerPort,
				TargetPort: intstr.FromInt32(p.ContainerPort),
			})
		}
	}
	return ports
}

// MutateService sets the selector, ports and the Canary's custom metadata
// (spec.service.apex, primary or canary) of a generated Service, keeping
// what the API server defaulted (clusterIP, nodePorts) and what others
// added.
func MutateService(canary *v1alpha1.Canary, svc *corev1.Service, selector map[string]string, ports []corev1.ServicePort, custom *v1alpha1.CustomMetadata) {
	svc.Labels, svc.Annotations = mergeGenerated(canary, svc, custom.GetLabels(), custom.GetAnnotations())
	svc.Spec.Selector = selector
	if svc.Spec.Type == "" {
		svc.Spec.Type = corev1.ServiceTypeClusterIP
	}
	existing := make(map[string]corev1.ServicePort, len(svc.Spec.Ports))
	for _, p := range svc.Spec.Ports {
		existing[p.Name] = p
	}
	for i, p := range ports {
		if old, ok := existing[p.Name]; ok {
			ports[i].NodePort = old.NodePort
		}
	}
	svc.Spec.Ports = ports
}
