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

package flaggerconvert

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// nginxAnnotationPrefix is the prefix of ingress-nginx's annotations, which
// change how it routes; its canary annotations are Flagger's own, on the
// canary Ingress it generates, not on the user's.
const nginxAnnotationPrefix = "nginx.ingress.kubernetes.io/"

// ingress is the Ingress the Canary's ingressRef names, when the input
// holds it.
func (c canaryConverter) ingress() *networkingv1.Ingress {
	var ref struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(c.in.Spec.IngressRef, &ref); err != nil || ref.Name == "" {
		return nil
	}
	return c.ingresses[c.in.Metadata.Namespace+"/"+ref.Name]
}

// ingressPath is one path of an Ingress, as an HTTPRoute matches it.
type ingressPath struct {
	kind, value string
}

// ingressRouting gives the HTTPRoute the hosts and paths by which the
// Canary's Ingress leads to the apex Service: the rules' hosts (none when a
// rule, or the default backend, takes every host) and their paths (none
// when one is the prefix /). ingress-nginx's own annotations, the Ingress's
// TLS and paths that differ from host to host are reported, as an HTTPRoute
// does not say them.
func (c canaryConverter) ingressRouting(out *v1alpha1.CanaryRouting) {
	ing := c.ingress()
	if ing == nil {
		return
	}
	apex := c.in.Spec.Service.Name
	if apex == "" {
		apex = c.in.Spec.TargetRef.Name
	}
	regex := ing.Annotations[nginxAnnotationPrefix+"use-regex"] == "true"
	var hosts []string
	everyHost, everyPath := false, false
	pathsOf := map[string][]ingressPath{}
	for _, rule := range ing.Spec.Rules {
		if rule.HTTP == nil {
			continue
		}
		for _, p := range rule.HTTP.Paths {
			if p.Backend.Service == nil || p.Backend.Service.Name != apex {
				continue // another app's path: it stays on the Ingress
			}
			path := ingressPathOf(p, regex)
			everyPath = everyPath || path == ingressPath{"PathPrefix", "/"}
			if !slices.Contains(pathsOf[rule.Host], path) {
				pathsOf[rule.Host] = append(pathsOf[rule.Host], path)
			}
		}
		if len(pathsOf[rule.Host]) > 0 {
			if rule.Host == "" {
				everyHost = true
			} else if !slices.Contains(hosts, rule.Host) {
				hosts = append(hosts, rule.Host)
			}
		}
	}
	if b := ing.Spec.DefaultBackend; b != nil && b.Service != nil && b.Service.Name == apex {
		everyHost, everyPath = true, true
	}
	field := fmt.Sprintf("spec.ingressRef (Ingress %s)", ing.Name)
	if len(pathsOf) == 0 && !everyHost {
		c.report.drop("spec.ingressRef", "the Ingress %s has no path to the apex Service %s: set routing.hosts and routing.match", ing.Name, apex)
		return
	}
	if !everyHost && len(out.Hosts) == 0 {
		out.Hosts = hosts
	}
	var paths []ingressPath
	for _, host := range sortedKeys(pathsOf) {
		if len(paths) > 0 && !sameSet(paths, pathsOf[host]) {
			c.report.drop(field+".spec.rules", "its hosts lead to %s by different paths: the HTTPRoute matches "+
				"each path on every host", apex)
		}
		for _, p := range pathsOf[host] {
			if !slices.Contains(paths, p) {
				paths = append(paths, p)
			}
		}
	}
	switch {
	case everyPath:
	case len(out.Match) > 0:
		c.report.drop(field+".paths", "spec.service.match sets routing.match: the Ingress's paths were left out")
	default:
		for _, p := range paths {
			out.Match = append(out.Match, v1alpha1.HTTPRouteMatch{Path: &v1alpha1.HTTPPathMatch{Type: p.kind, Value: p.value}})
		}
	}
	for _, key := range sortedKeys(ing.Annotations) {
		if strings.HasPrefix(key, nginxAnnotationPrefix) && key != nginxAnnotationPrefix+"use-regex" {
			c.report.drop(field+".metadata.annotations."+key, "ingress-nginx's own setting: the HTTPRoute does not carry it")
		}
	}
	if len(ing.Spec.TLS) > 0 {
		c.report.note(field+".spec.tls", "TLS ends at the Gateway's listener: its certificateRefs name the Secrets")
	}
	c.report.note("spec.ingressRef", "the Ingress %s: its hosts and paths to %s converted to routing.hosts and routing.match; it "+
		"passes through unchanged: once the Gateway serves those hosts, remove its rules to %s", ing.Name, apex, apex)
}

// ingressPathOf maps an Ingress path: Exact as it is, Prefix as a path
// prefix, ImplementationSpecific as ingress-nginx reads it (a prefix, or a
// regular expression with its use-regex annotation).
func ingressPathOf(p networkingv1.HTTPIngressPath, regex bool) ingressPath {
	value := p.Path
	if value == "" {
		value = "/"
	}
	switch {
	case p.PathType != nil && *p.PathType == networkingv1.PathTypeExact:
		return ingressPath{"Exact", value}
	case regex && (p.PathType == nil || *p.PathType == networkingv1.PathTypeImplementationSpecific):
		return ingressPath{"RegularExpression", value}
	}
	return ingressPath{"PathPrefix", value}
}

func sameSet(a, b []ingressPath) bool {
	return len(a) == len(b) && !slices.ContainsFunc(a, func(p ingressPath) bool { return !slices.Contains(b, p) })
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
