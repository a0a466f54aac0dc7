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

	notificationv1 "github.com/fluxcd/notification-controller/api/v1beta3"
	"github.com/fluxcd/pkg/apis/meta"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// providerKind is the kind of Flux's notification Providers.
const providerKind = "Provider"

// flaggerAlertProvider is Flagger's AlertProvider: a chat webhook.
type flaggerAlertProvider struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Spec       struct {
		Type      string                       `json:"type"`
		Channel   string                       `json:"channel,omitempty"`
		Username  string                       `json:"username,omitempty"`
		Address   string                       `json:"address,omitempty"`
		SecretRef *corev1.LocalObjectReference `json:"secretRef,omitempty"`
	} `json:"spec"`
}

// providerManifest is a Flux notification Provider, as written out.
type providerManifest struct {
	APIVersion string                      `json:"apiVersion"`
	Kind       string                      `json:"kind"`
	Metadata   manifestMetadata            `json:"metadata"`
	Spec       notificationv1.ProviderSpec `json:"spec"`
}

// alertProviderTypes are Flagger's AlertProvider types and the Flux
// Provider types that post the same messages: serin posts to those
// directly for the Canaries that name them in spec.alerts.
var alertProviderTypes = map[string]string{
	"slack":   notificationv1.SlackProvider,
	"msteams": notificationv1.MSTeamsProvider,
	"discord": notificationv1.DiscordProvider,
	"rocket":  notificationv1.RocketProvider,
	"gchat":   notificationv1.GoogleChatProvider,
}

// convertAlertProvider converts a Flagger AlertProvider to the Flux
// Provider of the same name and namespace, with the same Secret: Flux
// reads the webhook's URL from its address key, as Flagger did.
func (r *Result) convertAlertProvider(jsonDocument []byte) error {
	var in flaggerAlertProvider
	strictErrors, err := decodeStrict(jsonDocument, &in)
	if err != nil {
		return err
	}
	report := newObjectReport(in.Kind, in.Metadata)
	report.dropUnknown(strictErrors)
	defer func() {
		r.Dropped = append(r.Dropped, report.dropped...)
		r.Notes = append(r.Notes, report.notes...)
	}()
	providerType, ok := alertProviderTypes[in.Spec.Type]
	if !ok {
		report.drop("spec.type", "%q is not a Flagger AlertProvider type serin converts (slack, msteams, discord, rocket, gchat); "+
			"the AlertProvider was left out", in.Spec.Type)
		return nil
	}
	spec := notificationv1.ProviderSpec{Type: providerType, Channel: in.Spec.Channel, Username: in.Spec.Username, Address: in.Spec.Address}
	if in.Spec.SecretRef != nil {
		spec.SecretRef = &meta.LocalObjectReference{Name: in.Spec.SecretRef.Name}
	}
	report.note("kind", "converted to the Flux notification Provider %s of type %s, which the Canaries that named the AlertProvider "+
		"name in spec.alerts", in.Metadata.Name, providerType)
	r.Manifests = append(r.Manifests, Manifest{Kind: providerKind, Converted: true, Ref: report.object, Object: providerManifest{
		APIVersion: notificationv1.GroupVersion.String(),
		Kind:       providerKind,
		Metadata:   convertMetadata(in.Metadata),
		Spec:       spec,
	}})
	return nil
}

// flaggerAlert is one entry of a Flagger Canary's analysis.alerts.
type flaggerAlert struct {
	Name        string `json:"name"`
	Severity    string `json:"severity,omitempty"`
	ProviderRef struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace,omitempty"`
	} `json:"providerRef"`
}

// alerts converts analysis.alerts: each names the Flux Provider its
// AlertProvider converts to, with the same severity.
func (c canaryConverter) alerts(in *flaggerAnalysis, path string) []v1alpha1.CanaryAlert {
	if in == nil || !present(in.Alerts) {
		return nil
	}
	var alerts []flaggerAlert
	if err := json.Unmarshal(in.Alerts, &alerts); err != nil {
		c.report.drop(path+".alerts", "not a list of alerts: %v", err)
		return nil
	}
	var out []v1alpha1.CanaryAlert
	for i, a := range alerts {
		field := fmt.Sprintf("%s.alerts[%d]", path, i)
		severity := v1alpha1.AlertSeverity(a.Severity)
		switch severity {
		case "":
			severity = v1alpha1.AlertSeverity("info")
		case "info", "warn", "error":
		default:
			c.report.drop(field+".severity", "%q is not a severity (info, warn, error): the alert was left out", a.Severity)
			continue
		}
		namespace := a.ProviderRef.Namespace
		if namespace == "" {
			namespace = c.in.Metadata.Namespace
		}
		if namespace != c.in.Metadata.Namespace {
			c.report.note(field+".providerRef", "the Provider %s/%s is in another namespace than the Canary: an agent started with "+
				"--no-cross-namespace-refs refuses it; move the Provider to %s there", namespace, a.ProviderRef.Name, c.in.Metadata.Namespace)
		}
		if !c.alertProviders[namespace+"/"+a.ProviderRef.Name] {
			c.report.note(field+".providerRef", "the AlertProvider %s/%s is not in the input: convert it as well (serin convert -f DIRECTORY "+
				"reads every file of a folder), or create a Flux notification Provider of that name", namespace, a.ProviderRef.Name)
		}
		out = append(out, v1alpha1.CanaryAlert{Name: a.Name, Severity: severity,
			ProviderRef: meta.NamespacedObjectReference{Name: a.ProviderRef.Name, Namespace: a.ProviderRef.Namespace}})
	}
	return out
}
