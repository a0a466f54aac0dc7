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

// Package agentrequest asks the serin agent to act on a Canary: promote,
// abort, retry or revert. A request is an annotation set to a new value
// (the time it was made); the agent records that value in
// status.handledRequests once it has acted on it. The CLI's commands and
// the dashboard's buttons both make their requests here.
package agentrequest

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// FieldOwner names serin's command line and dashboard in the managed
// fields of what they patch.
const FieldOwner = client.FieldOwner("serin")

// Request is one kind of request to the agent.
type Request struct {
	// Verb names the request: promote, abort, retry or revert.
	Verb string
	// Annotation is the annotation whose new value makes the request.
	Annotation string
	// Short and Long describe what the agent does, for people.
	Short, Long string

	handled func(v1alpha1.HandledRequests) string
}

// All are the requests the agent handles, in the order people see them.
var All = []Request{
	{
		Verb:       "promote",
		Annotation: v1alpha1.PromoteRequestAnnotation,
		handled:    func(h v1alpha1.HandledRequests) string { return h.Promote },
		Short:      "Skip the rest of the analysis and promote the current revision",
		Long:       "Ask the agent to skip the rest of the analysis of the revision under analysis and promote it.",
	},
	{
		Verb:       "abort",
		Annotation: v1alpha1.AbortRequestAnnotation,
		handled:    func(h v1alpha1.HandledRequests) string { return h.Abort },
		Short:      "Roll the current revision back now",
		Long:       "Ask the agent to stop the analysis of the current revision and roll it back now.",
	},
	{
		Verb:       "retry",
		Annotation: v1alpha1.RetryRequestAnnotation,
		handled:    func(h v1alpha1.HandledRequests) string { return h.Retry },
		Short:      "Analyse a failed revision again, without a new commit",
		Long:       "Ask the agent to run the analysis of a failed revision again, without a new commit.",
	},
	{
		Verb:       "revert",
		Annotation: v1alpha1.RevertRequestAnnotation,
		handled:    func(h v1alpha1.HandledRequests) string { return h.Revert },
		Short:      "Open the GitOps revert of the current revision now",
		Long:       "Ask the agent to revert the current revision in its Git source now (a pull request, or a push with mode Push).",
	},
}

// ByVerb returns the request of a verb; ok is false for an unknown verb.
func ByVerb(verb string) (r Request, ok bool) {
	for _, r := range All {
		if r.Verb == verb {
			return r, true
		}
	}
	return Request{}, false
}

// Value is the annotation value of a request made at t.
func Value(t time.Time) string {
	return t.UTC().Format(time.RFC3339Nano)
}

// Send makes the request on the Canary: it sets the request's annotation
// to Value(at) with a JSON merge patch, and returns that value.
func (r Request) Send(ctx context.Context, kube client.Client, canary *v1alpha1.Canary, at time.Time) (string, error) {
	value := Value(at)
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"annotations": map[string]string{r.Annotation: value}},
	})
	if err != nil {
		return "", err
	}
	if err := kube.Patch(ctx, canary, client.RawPatch(types.MergePatchType, patch), FieldOwner); err != nil {
		return "", fmt.Errorf("requesting %s of %s %s/%s: %w", r.Verb, v1alpha1.CanaryKind, canary.Namespace, canary.Name, err)
	}
	return value, nil
}

// Handled tells whether the agent acted on the request of that value.
func (r Request) Handled(canary *v1alpha1.Canary, value string) bool {
	return value != "" && r.HandledValue(canary) == value
}

// HandledValue is the value of the last request of this kind that the
// agent acted on, "" when none.
func (r Request) HandledValue(canary *v1alpha1.Canary) string {
	return r.handled(canary.Status.HandledRequests)
}

// Pending returns the value of the Canary's request annotation when the
// agent has not acted on it yet, else "".
func (r Request) Pending(canary *v1alpha1.Canary) string {
	value := canary.GetAnnotations()[r.Annotation]
	if value == "" || r.Handled(canary, value) {
		return ""
	}
	return value
}
