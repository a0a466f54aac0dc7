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
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// keepAliveInterval is how often an idle event stream sends a comment, so
// that the browser and any proxy see it alive.
const keepAliveInterval = 20 * time.Second

// The events of the stream.
const (
	// eventSnapshot is the list of summaries, first of the list's stream.
	eventSnapshot = "snapshot"
	// eventCanary is a Canary that changed: its summary in the list's
	// stream, its detail in a Canary's.
	eventCanary = "canary"
	// eventDeleted is a Canary that is gone: {"namespace", "name"}.
	eventDeleted = "deleted"
	// eventProblem is why the dashboard cannot see the Canaries:
	// {"error": message}, with an empty message once it can again.
	eventProblem = "problem"
	// eventGroup is a CanaryGroup whose view changed (the group, or the
	// steps of a member), in the list's stream.
	eventGroup = "group"
	// eventGroupDeleted is a CanaryGroup that is gone: {"namespace", "name"}.
	eventGroupDeleted = "group-deleted"
	// eventGroupProblem is why the dashboard cannot see the CanaryGroups,
	// as eventProblem is for the Canaries.
	eventGroupProblem = "group-problem"
)

// streamEvents sends a page the Canaries as Server-Sent Events. Without a
// query it streams the list: a snapshot once the hub has listed, then each
// Canary that changes or is deleted, and each CanaryGroup whose view
// changes or that is deleted. With ?namespace=NS&name=NAME it
// streams that Canary's detail at each change. Both follow the hub, which
// watches the API server once for all the pages.
func (s *Server) streamEvents(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeProblem(w, problem{Status: http.StatusInternalServerError, Message: "the connection cannot stream events"})
		return
	}
	stream := &eventStream{w: w, sent: map[types.NamespacedName]string{}, sentGroups: map[types.NamespacedName]string{},
		allNamespaces: s.opts.Namespace == ""}
	if name := r.URL.Query().Get("name"); name != "" {
		stream.only = &types.NamespacedName{Namespace: r.URL.Query().Get("namespace"), Name: name}
		stream.allNamespaces = false
	}
	header := w.Header()
	header.Set("Content-Type", "text/event-stream")
	header.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)

	updates, unsubscribe := s.hub.subscribe()
	defer unsubscribe()
	keepAlive := time.NewTicker(keepAliveInterval)
	defer keepAlive.Stop()
	// The browser reconnects 2 s after the stream breaks.
	if _, err := io.WriteString(w, "retry: 2000\n\n"); err != nil {
		return
	}
	for {
		if err := stream.sendChanges(s.hub.snapshot()); err != nil {
			return
		}
		flusher.Flush()
		select {
		case <-r.Context().Done():
			return
		case <-updates:
		case <-keepAlive.C:
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
				return
			}
		}
	}
}

// eventStream is what one page was sent.
type eventStream struct {
	w             io.Writer
	only          *types.NamespacedName // the Canary of a detail stream
	allNamespaces bool

	sent         map[types.NamespacedName]string // the resourceVersion sent of each Canary
	snapshotSent bool
	problem      string
	// sentGroups is the JSON sent of each group: a group's view changes
	// with its members' too.
	sentGroups   map[types.NamespacedName]string
	groupProblem string
}

// sendChanges sends what changed in the hub since the last call.
func (e *eventStream) sendChanges(snap snapshot) error {
	problem := ""
	if snap.problem != nil {
		problem = problemOf(snap.problem, e.allNamespaces).Message
	}
	if problem != e.problem {
		e.problem = problem
		if err := e.send(eventProblem, map[string]string{"error": problem}); err != nil {
			return err
		}
	}
	if e.only != nil {
		if !snap.synced {
			return nil
		}
		return e.sendDetail(snap)
	}
	groupProblem := ""
	if snap.groupsProblem != nil {
		groupProblem = problemOf(snap.groupsProblem, e.allNamespaces).Message
	}
	if groupProblem != e.groupProblem {
		e.groupProblem = groupProblem
		if err := e.send(eventGroupProblem, map[string]string{"error": groupProblem}); err != nil {
			return err
		}
	}
	if !snap.synced {
		return nil
	}
	return e.sendList(snap)
}

func (e *eventStream) sendList(snap snapshot) error {
	seen := map[types.NamespacedName]bool{}
	var changed []*v1alpha1.Canary
	for _, canary := range snap.canaries {
		key := client.ObjectKeyFromObject(canary)
		seen[key] = true
		if e.sent[key] != canary.ResourceVersion || canary.ResourceVersion == "" {
			changed = append(changed, canary)
			e.sent[key] = canary.ResourceVersion
		}
	}
	groups := groupViews(snap)
	if !e.snapshotSent {
		e.snapshotSent = true
		summaries := make([]summary, 0, len(snap.canaries))
		for _, canary := range snap.canaries {
			summaries = append(summaries, summaryOf(canary))
		}
		for _, g := range groups {
			body, err := json.Marshal(g)
			if err != nil {
				return err
			}
			e.sentGroups[types.NamespacedName{Namespace: g.Namespace, Name: g.Name}] = string(body)
		}
		return e.send(eventSnapshot, map[string]any{"canaries": summaries, "groups": groups})
	}
	for _, canary := range changed {
		if err := e.send(eventCanary, summaryOf(canary)); err != nil {
			return err
		}
	}
	for key := range e.sent {
		if !seen[key] {
			delete(e.sent, key)
			if err := e.send(eventDeleted, deletedCanary(key)); err != nil {
				return err
			}
		}
	}
	return e.sendGroups(groups)
}

// sendGroups sends the groups whose view changed since the last call,
// and those that are gone.
func (e *eventStream) sendGroups(groups []groupView) error {
	seen := map[types.NamespacedName]bool{}
	for _, g := range groups {
		key := types.NamespacedName{Namespace: g.Namespace, Name: g.Name}
		seen[key] = true
		body, err := json.Marshal(g)
		if err != nil {
			return err
		}
		if e.sentGroups[key] == string(body) {
			continue
		}
		e.sentGroups[key] = string(body)
		if err := e.sendRaw(eventGroup, body); err != nil {
			return err
		}
	}
	for key := range e.sentGroups {
		if !seen[key] {
			delete(e.sentGroups, key)
			if err := e.send(eventGroupDeleted, map[string]string{"namespace": key.Namespace, "name": key.Name}); err != nil {
				return err
			}
		}
	}
	return nil
}

// groupViews lays out the snapshot's groups with their members.
func groupViews(snap snapshot) []groupView {
	canaries := make(map[types.NamespacedName]*v1alpha1.Canary, len(snap.canaries))
	for _, c := range snap.canaries {
		canaries[client.ObjectKeyFromObject(c)] = c
	}
	views := make([]groupView, 0, len(snap.groups))
	for _, g := range snap.groups {
		views = append(views, groupViewOf(g, canaries))
	}
	return views
}

// goneVersion marks, in eventStream.sent, a Canary reported deleted.
const goneVersion = "-"

func (e *eventStream) sendDetail(snap snapshot) error {
	key := *e.only
	for _, canary := range snap.canaries {
		if client.ObjectKeyFromObject(canary) != key {
			continue
		}
		if e.sent[key] == canary.ResourceVersion && canary.ResourceVersion != "" {
			return nil
		}
		e.sent[key] = canary.ResourceVersion
		return e.send(eventCanary, detailOf(canary))
	}
	if e.sent[key] == goneVersion {
		return nil
	}
	e.sent[key] = goneVersion
	return e.send(eventDeleted, deletedCanary(key))
}

func deletedCanary(key types.NamespacedName) map[string]string {
	return map[string]string{"namespace": key.Namespace, "name": key.Name,
		"message": fmt.Sprintf("%s %s/%s does not exist (or no longer)", v1alpha1.CanaryKind, key.Namespace, key.Name)}
}

// send writes one event; JSON has no line breaks, so data is one line.
func (e *eventStream) send(event string, data any) error {
	body, err := json.Marshal(data)
	if err != nil {
		return err
	}
	return e.sendRaw(event, body)
}

// sendRaw writes one event of data already in JSON.
func (e *eventStream) sendRaw(event string, body []byte) error {
	_, err := fmt.Fprintf(e.w, "event: %s\ndata: %s\n\n", event, body)
	return err
}
