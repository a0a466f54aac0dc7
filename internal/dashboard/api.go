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

package dashboard

import (
	"fmt"
	"net/http"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/agentrequest"
)

// The JSON API reads the API server on each call: it is there for scripts
// and tests; the pages follow the event stream.

// listCanaries answers {"canaries": [summary, …]}.
func (s *Server) listCanaries(w http.ResponseWriter, r *http.Request) {
	list := &v1alpha1.CanaryList{}
	if err := s.kube.List(r.Context(), list, s.hub.listOptions()...); err != nil {
		writeProblem(w, problemOf(err, s.opts.Namespace == ""))
		return
	}
	summaries := make([]summary, 0, len(list.Items))
	for i := range list.Items {
		summaries = append(summaries, summaryOf(&list.Items[i]))
	}
	writeJSON(w, http.StatusOK, map[string]any{"canaries": summaries})
}

// listGroups answers {"groups": [group, …]}: each CanaryGroup with its
// release and its members' steps, read from the API server.
func (s *Server) listGroups(w http.ResponseWriter, r *http.Request) {
	groups := &v1alpha1.CanaryGroupList{}
	if err := s.kube.List(r.Context(), groups, s.hub.listOptions()...); err != nil {
		writeProblem(w, problemOf(err, s.opts.Namespace == ""))
		return
	}
	canaries := &v1alpha1.CanaryList{}
	if err := s.kube.List(r.Context(), canaries, s.hub.listOptions()...); err != nil {
		writeProblem(w, problemOf(err, s.opts.Namespace == ""))
		return
	}
	byKey := keyed(canaries.Items)
	views := make([]groupView, 0, len(groups.Items))
	for i := range groups.Items {
		views = append(views, groupViewOf(&groups.Items[i], byKey))
	}
	writeJSON(w, http.StatusOK, map[string]any{"groups": views})
}

// getCanary answers the detail of one Canary.
func (s *Server) getCanary(w http.ResponseWriter, r *http.Request) {
	canary, ok := s.readCanary(w, r)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, detailOf(canary))
}

// readCanary reads the Canary the path names, or answers why it cannot.
func (s *Server) readCanary(w http.ResponseWriter, r *http.Request) (*v1alpha1.Canary, bool) {
	key := client.ObjectKey{Namespace: r.PathValue("namespace"), Name: r.PathValue("name")}
	if s.opts.Namespace != "" && key.Namespace != s.opts.Namespace {
		writeProblem(w, problem{Status: http.StatusNotFound,
			Message: fmt.Sprintf("this dashboard shows the namespace %s only", s.opts.Namespace)})
		return nil, false
	}
	canary := &v1alpha1.Canary{}
	if err := s.kube.Get(r.Context(), key, canary); err != nil {
		writeProblem(w, problemOf(err, false))
		return nil, false
	}
	return canary, true
}

// requestResult answers a request of the agent.
type requestResult struct {
	Verb string `json:"verb"`
	// Value is the request annotation's value, which the agent copies into
	// status.handledRequests once it has acted.
	Value   string `json:"value"`
	Message string `json:"message"`
}

// requestAction asks the agent to promote, abort, retry or revert, as the
// CLI's commands of the same names do with --no-wait: the page follows
// status.handledRequests to see the agent act.
func (s *Server) requestAction(w http.ResponseWriter, r *http.Request) {
	request, ok := agentrequest.ByVerb(r.PathValue("verb"))
	if !ok {
		writeProblem(w, problem{Status: http.StatusNotFound, Message: fmt.Sprintf("no request %q: the agent handles promote, abort, retry and revert", r.PathValue("verb"))})
		return
	}
	canary, ok := s.readCanary(w, r)
	if !ok {
		return
	}
	value, err := request.Send(r.Context(), s.kube, canary, s.opts.Now())
	if err != nil {
		writeProblem(w, problemOf(err, false))
		return
	}
	fmt.Fprintf(s.opts.Log, "► %s requested of %s %s/%s\n", request.Verb, v1alpha1.CanaryKind, canary.Namespace, canary.Name)
	message := fmt.Sprintf("%s requested: waiting for the agent to act on it", request.Verb)
	if canary.Spec.Suspend {
		message = fmt.Sprintf("%s requested, but the Canary is suspended: the agent acts on it once the Canary is resumed", request.Verb)
	}
	writeJSON(w, http.StatusAccepted, requestResult{Verb: request.Verb, Value: value, Message: message})
}
