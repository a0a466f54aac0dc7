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
	"maps"
	"slices"
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
	name := refName(c.in.Spec.IngressRef)
	if name == "" {
		return nil
	}
	return c.ingresses[c.in.Metadata.Namespace+"/"+name]
}

// ingressPath is one path of an Ingress, as an HTTPRoute matches it.
type ingressPath struct {
	kind, value string
}

// entryMatch is a path (and a method) by which an entry object (an
// Ingress, an ApisixRoute) leads to the apex Service.
type entryMatch struct {
	path   ingressPath
	method string
}

// everything tells whether the match takes every request.
func (m entryMatch) everything() bool {
	return m.path == ingressPath{"PathPrefix", "/"} && m.method == ""
}

// entryRoutes are the matches of an entry object's rules that lead to the
// apex Service, by host ("" for every host).
type entryRoutes map[string][]entryMatch

func (r entryRoutes) add(host string, m entryMatch) {
	if !slices.Contains(r[host], m) {
		r[host] = append(r[host], m)
	}
}

// apexName is the name of the Canary's apex Service.
func (c canaryConverter) apexName() string {
	if c.in.Spec.Service.Name != "" {
		return c.in.Spec.Service.Name
	}
	return c.in.Spec.TargetRef.Name
}

// applyEntryRoutes gives the HTTPRoute the hosts and matches of routes, the
// ways the entry object (named by field and what, "Ingress podinfo") leads
// to the apex Service: hosts unless one rule takes every host, matches
// unless one takes every request. Matches that differ from host to host,
// and more than routing.match holds, are reported. false when no rule
// leads to the apex Service.
func (c canaryConverter) applyEntryRoutes(out *v1alpha1.CanaryRouting, routes entryRoutes, field, what string) bool {
	apex := c.apexName()
	if len(routes) == 0 {
		c.report.drop(field, "the %s has no path to the apex Service %s: set routing.hosts and routing.match", what, apex)
		return false
	}
	if _, every := routes[""]; !every && len(out.Hosts) == 0 {
		out.Hosts = slices.Sorted(maps.Keys(routes))
	}
	var matches []entryMatch
	everything, differ := false, false
	for _, host := range slices.Sorted(maps.Keys(routes)) {
		differ = differ || (len(matches) > 0 && !sameSet(matches, routes[host]))
		for _, m := range routes[host] {
			everything = everything || m.everything()
			if !slices.Contains(matches, m) {
				matches = append(matches, m)
			}
		}
	}
	if differ {
		c.report.drop(field, "the hosts of the %s lead to %s by different paths: the HTTPRoute matches each of them on every host", what, apex)
	}
	switch {
	case everything:
	case len(out.Match) > 0:
		c.report.drop(field, "spec.service.match sets routing.match: the paths of the %s were left out", what)
	default:
		if len(matches) > maxRouteMatches {
			c.report.drop(field, "the %s leads to %s by %d paths and methods, routing.match holds %d: the first were kept",
				what, apex, len(matches), maxRouteMatches)
			matches = matches[:maxRouteMatches]
		}
		for _, m := range matches {
			out.Match = append(out.Match, v1alpha1.HTTPRouteMatch{Path: &v1alpha1.HTTPPathMatch{Type: m.path.kind, Value: m.path.value},
				Method: m.method})
		}
	}
	c.report.note(field, "the %s: its hosts and paths to %s converted to routing.hosts and routing.match; it passes through "+
		"unchanged: once the Gateway serves those hosts, remove its rules to %s", what, apex, apex)
	return true
}

// maxRouteMatches is the most entries routing.match holds.
const maxRouteMatches = 8

// ingressRouting gives the HTTPRoute the hosts and paths by which the
// Canary's Ingress leads to the apex Service (applyEntryRoutes);
// ingress-nginx's own annotations and the Ingress's TLS are reported, as
// an HTTPRoute does not say them.
func (c canaryConverter) ingressRouting(out *v1alpha1.CanaryRouting) {
	ing := c.ingress()
	if ing == nil {
		return
	}
	apex := c.apexName()
	regex := ing.Annotations[nginxAnnotationPrefix+"use-regex"] == "true"
	routes := entryRoutes{}
	for _, rule := range ing.Spec.Rules {
		if rule.HTTP == nil {
			continue
		}
		for _, p := range rule.HTTP.Paths {
			if p.Backend.Service != nil && p.Backend.Service.Name == apex { // others stay on the Ingress
				routes.add(rule.Host, entryMatch{path: ingressPathOf(p, regex)})
			}
		}
	}
	if b := ing.Spec.DefaultBackend; b != nil && b.Service != nil && b.Service.Name == apex {
		routes.add("", entryMatch{path: ingressPath{"PathPrefix", "/"}})
	}
	if !c.applyEntryRoutes(out, routes, "spec.ingressRef", "Ingress "+ing.Name) {
		return
	}
	field := fmt.Sprintf("spec.ingressRef (Ingress %s)", ing.Name)
	for _, key := range slices.Sorted(maps.Keys(ing.Annotations)) {
		if strings.HasPrefix(key, nginxAnnotationPrefix) && key != nginxAnnotationPrefix+"use-regex" {
			c.report.drop(field+".metadata.annotations."+key, "ingress-nginx's own setting: the HTTPRoute does not carry it")
		}
	}
	if len(ing.Spec.TLS) > 0 {
		c.report.note(field+".spec.tls", "TLS ends at the Gateway's listener: its certificateRefs name the Secrets")
	}
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

func sameSet[T comparable](a, b []T) bool {
	return len(a) == len(b) && !slices.ContainsFunc(a, func(x T) bool { return !slices.Contains(b, x) })
}

// apisixRoute is what the conversion reads of an apisix.apache.org/v2
// ApisixRoute: its HTTP rules.
type apisixRoute struct {
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Spec struct {
		HTTP []apisixHTTPRule `json:"http"`
	} `json:"spec"`
}

// apisixHTTPRule is one HTTP rule of an ApisixRoute.
type apisixHTTPRule struct {
	Name  string `json:"name"`
	Match struct {
		Hosts       []string        `json:"hosts"`
		Paths       []string        `json:"paths"`
		Methods     []string        `json:"methods"`
		Exprs       json.RawMessage `json:"exprs"`
		RemoteAddrs []string        `json:"remoteAddrs"`
	} `json:"match"`
	Backends []struct {
		ServiceName string `json:"serviceName"`
	} `json:"backends"`
	Plugins []struct {
		Name string `json:"name"`
	} `json:"plugins"`
}

// leadsTo tells whether the rule sends requests to the Service.
func (r apisixHTTPRule) leadsTo(service string) bool {
	for _, b := range r.Backends {
		if b.ServiceName == service {
			return true
		}
	}
	return false
}

// apisixRouteOf is the ApisixRoute the Canary's routeRef names, when the
// input holds it.
func (c canaryConverter) apisixRouteOf() *apisixRoute {
	name := refName(c.in.Spec.RouteRef)
	if name == "" {
		return nil
	}
	return c.apisixRoutes[c.in.Metadata.Namespace+"/"+name]
}

// apisixRouting gives the HTTPRoute the hosts, paths and methods by which
// the Canary's ApisixRoute leads to the apex Service (applyEntryRoutes): a
// path ending in /* is a prefix, another exact. What an HTTPRoute does not
// say (exprs, remoteAddrs, plugins) is reported.
func (c canaryConverter) apisixRouting(out *v1alpha1.CanaryRouting) {
	route := c.apisixRouteOf()
	if route == nil {
		return
	}
	apex := c.apexName()
	routes := entryRoutes{}
	var unsaid []string
	for i, rule := range route.Spec.HTTP {
		if !rule.leadsTo(apex) {
			continue
		}
		hosts := rule.Match.Hosts
		if len(hosts) == 0 {
			hosts = []string{""}
		}
		paths := rule.Match.Paths
		if len(paths) == 0 {
			paths = []string{"/*"}
		}
		methods := rule.Match.Methods
		if len(methods) == 0 {
			methods = []string{""}
		}
		for _, host := range hosts {
			for _, p := range paths {
				for _, method := range methods {
					routes.add(host, entryMatch{path: apisixPath(p), method: method})
				}
			}
		}
		where := fmt.Sprintf("spec.http[%d]", i)
		if present(rule.Match.Exprs) {
			unsaid = append(unsaid, where+".match.exprs")
		}
		if len(rule.Match.RemoteAddrs) > 0 {
			unsaid = append(unsaid, where+".match.remoteAddrs")
		}
		for _, plugin := range rule.Plugins {
			if plugin.Name != "prometheus" { // the metrics of Flagger's APISIX checks, not routing
				unsaid = append(unsaid, where+".plugins."+plugin.Name)
			}
		}
	}
	what := "ApisixRoute " + route.Metadata.Name
	if !c.applyEntryRoutes(out, routes, "spec.routeRef", what) {
		return
	}
	for _, field := range unsaid {
		c.report.drop(fmt.Sprintf("spec.routeRef (%s).%s", what, field), "APISIX's own routing: the HTTPRoute does not carry it")
	}
}

// apisixPath maps an ApisixRoute path: /api/* is the prefix /api, /* every
// path, anything else the exact path.
func apisixPath(p string) ingressPath {
	if prefix, ok := strings.CutSuffix(p, "/*"); ok {
		if prefix == "" {
			prefix = "/"
		}
		return ingressPath{"PathPrefix", prefix}
	}
	return ingressPath{"Exact", p}
}
