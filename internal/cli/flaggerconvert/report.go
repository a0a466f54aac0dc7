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
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sigsjson "sigs.k8s.io/json"
)

// objectReport collects what one Flagger object loses in the conversion.
type objectReport struct {
	object  string
	dropped []Dropped
	notes   []Dropped
}

func newObjectReport(kind string, meta metav1.ObjectMeta) *objectReport {
	name := meta.Name
	if meta.Namespace != "" {
		name = meta.Namespace + "/" + meta.Name
	}
	return &objectReport{object: kind + " " + name}
}

// note says how a field was carried over onto another mechanism that does
// the same: nothing is lost, but the routing is not written the same way.
func (o *objectReport) note(field, format string, args ...any) {
	o.notes = append(o.notes, Dropped{Object: o.object, Field: field, Reason: fmt.Sprintf(format, args...)})
}

func (o *objectReport) drop(field, format string, args ...any) {
	o.dropped = append(o.dropped, Dropped{Object: o.object, Field: field, Reason: fmt.Sprintf(format, args...)})
}

// decodeStrict decodes a Flagger object and returns the fields that its
// type does not know, each as a strict decoding error.
func decodeStrict(jsonDocument []byte, into any) ([]error, error) {
	return sigsjson.UnmarshalStrict(jsonDocument, into,
		sigsjson.DisallowUnknownFields, sigsjson.DisallowDuplicateFields)
}

// dropUnknown reports the fields strict decoding did not know.
func (o *objectReport) dropUnknown(strictErrors []error) {
	for _, err := range strictErrors {
		var fieldErr interface{ FieldPath() string }
		if !errors.As(err, &fieldErr) {
			o.drop("", "%v", err)
			continue
		}
		if strings.HasPrefix(err.Error(), "duplicate field") {
			o.drop(fieldErr.FieldPath(), "set more than once: only the last value was converted")
			continue
		}
		o.drop(fieldErr.FieldPath(), "not a field of %s that serin can map", flaggerAPIVersion)
	}
}

// manifestMetadata is the metadata written for a converted object: what a
// person sets, not what the API server or Flagger filled in.
type manifestMetadata struct {
	Name        string            `json:"name"`
	Namespace   string            `json:"namespace,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// lastAppliedAnnotation is kubectl's copy of the applied Flagger manifest.
const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

func convertMetadata(meta metav1.ObjectMeta) manifestMetadata {
	annotations := map[string]string{}
	for key, value := range meta.Annotations {
		if key != lastAppliedAnnotation {
			annotations[key] = value
		}
	}
	if len(annotations) == 0 {
		annotations = nil
	}
	return manifestMetadata{Name: meta.Name, Namespace: meta.Namespace, Labels: meta.Labels, Annotations: annotations}
}
