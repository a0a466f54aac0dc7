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

// Package flaggerconvert translates Flagger's flagger.app/v1beta1 Canary and
// MetricTemplate objects into serin's serin.dev/v1alpha1 ones, and reports
// every field that has no place in them, and why.
package flaggerconvert

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/serin-dev/serin/api/v1alpha1"
)

const (
	flaggerGroup      = "flagger.app"
	flaggerAPIVersion = flaggerGroup + "/v1beta1"
)

// Dropped is something of a Flagger object that the serin object lacks.
type Dropped struct {
	// Object names the Flagger object: "Canary apps/podinfo".
	Object string
	// Field is the path of the field, e.g. spec.provider; empty when the
	// whole object was left out.
	Field string
	// Reason says why the field could not be mapped.
	Reason string
}

func (d Dropped) String() string {
	if d.Field == "" {
		return d.Object + ": " + d.Reason
	}
	return d.Object + ": " + d.Field + ": " + d.Reason
}

// Manifest is one document of the output.
type Manifest struct {
	// Kind of the object, for summaries.
	Kind string
	// Source is the index of the input document the object comes from.
	Source int
	// Ref names a converted object as the report does: "Canary apps/podinfo".
	Ref string
	// Converted is false for a document that was not a Flagger object and
	// is passed through as it was.
	Converted bool
	// Object marshals to the document.
	Object any
	// Raw, when set, is the document as it is written instead of Object:
	// a document passed through, as it was (comments, order and all), or
	// edited in place.
	Raw []byte
}

// Result is the conversion of a stream of manifests.
type Result struct {
	Manifests []Manifest
	Dropped   []Dropped
	// Notes are fields carried over onto another mechanism that does the
	// same (a mesh's routing as Gateway API's GAMMA): said, not lost.
	Notes []Dropped

	opts Options
	// ingresses and apisixRoutes are the Ingresses and ApisixRoutes of the
	// input, by namespace/name: the hosts and paths of a Canary's
	// ingressRef or routeRef.
	ingresses    map[string]*networkingv1.Ingress
	apisixRoutes map[string]*apisixRoute
	// templates and alertProviders are the Flagger MetricTemplates and
	// AlertProviders of the input, by namespace/name.
	templates, alertProviders map[string]bool
}

// Convert reads a multi-document YAML (or JSON) stream. Flagger Canaries and
// MetricTemplates become serin ones; documents of other API groups are passed
// through unchanged; other flagger.app objects are left out and reported.
// The error is for input that cannot be read at all.
func Convert(data []byte) (*Result, error) {
	return Options{}.Convert(data)
}

// Options are what a conversion needs to know beyond the manifests.
type Options struct {
	// MeshProvider is the -mesh-provider flag of the Flagger that ran the
	// Canaries: the provider of a Canary that sets no spec.provider.
	MeshProvider string
	// Gateway is the Gateway API Gateway that takes over from an ingress
	// controller's own resources (providers contour, gloo, traefik,
	// apisix, nginx, skipper): with it, their Canaries convert to
	// routing.provider gatewayapi on that Gateway, weights and all;
	// without it, to kubernetes (blue/green), their weights as iterations.
	Gateway *v1alpha1.GatewayReference
	// DataPlane serves that Gateway (or the mesh): the routing.dataPlane of
	// built-in checks whose provider does not tell serin's data plane.
	DataPlane v1alpha1.DataPlane
	// MetricsServer is the -metrics-server flag of the Flagger that ran
	// the Canaries: the Prometheus of their inline queries, which convert
	// to generated MetricTemplates.
	MetricsServer string
}

// Convert converts as the package's Convert does, with the options.
func (o Options) Convert(data []byte) (*Result, error) {
	documents, err := SplitDocuments(data)
	if err != nil {
		return nil, err
	}
	return o.ConvertDocuments(documents)
}

// SplitDocuments splits a YAML stream into its documents.
func SplitDocuments(data []byte) ([][]byte, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var documents [][]byte
	for index := 1; ; index++ {
		document, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return documents, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading document %d: %w", index, err)
		}
		documents = append(documents, document)
	}
}

// ConvertDocuments converts documents as one input (a directory's files):
// a Canary's references (its Ingress, its MetricTemplates) are looked for
// among all of them; each Manifest's Source is the index of its document.
func (o Options) ConvertDocuments(documents [][]byte) (*Result, error) {
	result := &Result{opts: o, ingresses: map[string]*networkingv1.Ingress{}, apisixRoutes: map[string]*apisixRoute{},
		templates: map[string]bool{}, alertProviders: map[string]bool{}}
	// The entry objects first: a Canary may come before the one it names.
	for _, document := range documents {
		result.collectEntry(document)
	}
	for i, document := range documents {
		first := len(result.Manifests)
		if err := result.convertDocument(document); err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		for j := first; j < len(result.Manifests); j++ {
			result.Manifests[j].Source = i
		}
	}
	result.fitHelmReleases()
	return result, nil
}

// collectEntry keeps a networking.k8s.io/v1 Ingress or an
// apisix.apache.org/v2 ApisixRoute of the input, and notes its Flagger
// MetricTemplates; other documents, and those that do not read, are the
// conversion's to report.
func (r *Result) collectEntry(document []byte) {
	var header documentHeader
	if err := yaml.Unmarshal(document, &header); err != nil {
		return
	}
	switch {
	case header.APIVersion == "networking.k8s.io/v1" && header.Kind == "Ingress":
		ingress := &networkingv1.Ingress{}
		if err := yaml.Unmarshal(document, ingress); err == nil {
			r.ingresses[ingress.Namespace+"/"+ingress.Name] = ingress
		}
	case header.APIVersion == flaggerAPIVersion && header.Kind == "MetricTemplate":
		r.templates[header.Metadata.Namespace+"/"+header.Metadata.Name] = true
	case header.APIVersion == flaggerAPIVersion && header.Kind == "AlertProvider":
		r.alertProviders[header.Metadata.Namespace+"/"+header.Metadata.Name] = true
	case header.APIVersion == "apisix.apache.org/v2" && header.Kind == "ApisixRoute":
		route := &apisixRoute{}
		if err := yaml.Unmarshal(document, route); err == nil {
			r.apisixRoutes[route.Metadata.Namespace+"/"+route.Metadata.Name] = route
		}
	}
}

// documentHeader is what tells how to convert a document.
type documentHeader struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        metav1.ObjectMeta `json:"metadata"`
}

func (r *Result) convertDocument(document []byte) error {
	jsonDocument, err := yaml.YAMLToJSON(document)
	if err != nil {
		return err
	}
	if trimmed := string(bytes.TrimSpace(jsonDocument)); trimmed == "null" || trimmed == "" {
		return nil // an empty document or one of comments only
	}
	var header documentHeader
	if err := json.Unmarshal(jsonDocument, &header); err != nil {
		return err
	}
	group, _, _ := strings.Cut(header.APIVersion, "/")
	switch {
	case group != flaggerGroup:
		return r.passThrough(document, jsonDocument, header.Kind)
	case header.APIVersion != flaggerAPIVersion:
		r.leaveOut(header, fmt.Sprintf("%s is not supported: convert from %s", header.APIVersion, flaggerAPIVersion))
	case header.Kind == "Canary":
		return r.convertCanary(jsonDocument)
	case header.Kind == "MetricTemplate":
		return r.convertMetricTemplate(jsonDocument)
	case header.Kind == "AlertProvider":
		return r.convertAlertProvider(jsonDocument)
	default:
		r.leaveOut(header, fmt.Sprintf("%s has no serin equivalent", header.Kind))
	}
	return nil
}

// passThrough keeps a document of another API group as it was: its bytes
// are written back, and its object is read for the checks that look at it
// (fitHelmReleases).
func (r *Result) passThrough(document, jsonDocument []byte, kind string) error {
	var object map[string]any
	if err := json.Unmarshal(jsonDocument, &object); err != nil {
		return err
	}
	raw := bytes.TrimLeft(document, "\n")
	if !bytes.HasSuffix(raw, []byte("\n")) {
		raw = append(slices.Clone(raw), '\n')
	}
	r.Manifests = append(r.Manifests, Manifest{Kind: kind, Object: object, Raw: raw})
	return nil
}

func (r *Result) leaveOut(header documentHeader, reason string) {
	report := newObjectReport(header.Kind, header.Metadata)
	report.drop("", "%s; it was left out", reason)
	r.Dropped = append(r.Dropped, report.dropped...)
}

// WriteYAML writes manifests as one YAML stream.
func WriteYAML(w io.Writer, manifests []Manifest) error {
	for i, manifest := range manifests {
		if i > 0 {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		data := manifest.Raw
		if data == nil {
			var err error
			if data, err = yaml.Marshal(manifest.Object); err != nil {
				return err
			}
		}
		if _, err := w.Write(data); err != nil {
			return err
		}
	}
	return nil
}
