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
)

// destinationRuleManifest is an Istio DestinationRule, as written out.
type destinationRuleManifest struct {
	APIVersion string           `json:"apiVersion"`
	Kind       string           `json:"kind"`
	Metadata   manifestMetadata `json:"metadata"`
	Spec       struct {
		Host          string          `json:"host"`
		TrafficPolicy json.RawMessage `json:"trafficPolicy"`
	} `json:"spec"`
}

// destinationRules carries spec.service.trafficPolicy over as Flagger
// applied it: one Istio DestinationRule for each of the Services the
// HTTPRoute routes to, <apex>-primary and <apex>-canary, whose names serin
// generates as Flagger did. Istio applies a DestinationRule to the Service
// of its host whatever routes to it, so TLS modes, load balancing and
// outlier detection hold under serin's HTTPRoute. serin does not manage
// them: they are written next to the Canary, to apply with it.
func (c canaryConverter) destinationRules() {
	policy, provider := c.in.Spec.Service.TrafficPolicy, c.in.Spec.Provider
	switch {
	case !present(policy):
		return
	case baseProvider(provider) != "istio":
		c.report.note("spec.service.trafficPolicy", "Flagger applies it with its istio provider only, so it ignored it with %q: left out", provider)
		return
	}
	apex := c.apexName()
	for _, host := range []string{apex + "-primary", apex + "-canary"} {
		rule := destinationRuleManifest{APIVersion: "networking.istio.io/v1beta1", Kind: "DestinationRule",
			Metadata: manifestMetadata{Name: host, Namespace: c.in.Metadata.Namespace}}
		rule.Spec.Host = host
		rule.Spec.TrafficPolicy = policy
		*c.generated = append(*c.generated, Manifest{Kind: "DestinationRule", Converted: true,
			Ref: "DestinationRule " + c.in.Metadata.Namespace + "/" + host, Object: rule})
	}
	c.report.note("spec.service.trafficPolicy", "written as the Istio DestinationRules %s-primary and %s-canary, for the Services "+
		"the HTTPRoute routes to, as Flagger generated them: apply them with the Canary (serin does not manage them)", apex, apex)
}
