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

package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Names of the Flux notification objects that point at the sink.
const (
	providerName = "demo-sink"
	alertName    = "apps"
)

// sink stands for Slack or any webhook receiver: the target of a Flux
// Provider of type generic, to which the real notification-controller
// posts the events of the Alert on the app's Kustomization. It prints a
// line for each message and keeps them.
type sink struct {
	URL    string
	screen *Screen
	srv    *http.Server

	mu     sync.Mutex
	events []eventv1.Event
}

// startSink serves on a free loopback port until ctx ends.
func startSink(ctx context.Context, screen *Screen) (*sink, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &sink{URL: "http://" + l.Addr().String() + "/", screen: screen}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.receive), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = s.srv.Serve(l) }()
	go func() {
		<-ctx.Done()
		_ = s.srv.Close()
	}()
	return s, nil
}

func (s *sink) receive(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var ev eventv1.Event
	if err == nil {
		err = json.Unmarshal(body, &ev)
	}
	if err != nil {
		s.screen.Line("sink", "✉ a message that is no Flux event: %v", err)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.events = append(s.events, ev)
	s.mu.Unlock()
	s.screen.Line("sink", "%s", summarize(ev))
	w.WriteHeader(http.StatusOK)
}

// longHash is a Git commit hash, shown with 8 digits as the CLI does.
var longHash = regexp.MustCompile(`\b([0-9a-f]{8})[0-9a-f]{32,}\b`)

// summarize is one line per message: severity, reason, weight, message.
func summarize(ev eventv1.Event) string {
	msg, _, _ := strings.Cut(ev.Message, "\n")
	msg = longHash.ReplaceAllString(msg, "$1")
	msg = truncate(msg, 100)
	line := fmt.Sprintf("✉ %-5s %-16s %s", ev.Severity, ev.Reason, msg)
	if ev.Metadata["commit_status"] == "update" {
		line += "  (commit status)"
	}
	return line
}

// count is the number of messages received so far.
func (s *sink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.events)
}

// received reports whether a message with reason arrived after the first
// skip messages.
func (s *sink) received(skip int, reason string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ev := range s.events[min(skip, len(s.events)):] {
		if ev.Reason == reason {
			return true
		}
	}
	return false
}

// notificationObjects are the Provider that posts to the sink and the
// Alert that sends it every event about the app's Kustomization: serin's
// events reach it because serin attributes them to the Kustomization that
// applied the canary's target (notification mode owner).
func (s *sink) notificationObjects(ns string) []*unstructured.Unstructured {
	return []*unstructured.Unstructured{
		fluxObject("notification.toolkit.fluxcd.io/v1beta3", "Provider", ns, providerName, map[string]any{
			"type": "generic", "address": s.URL,
		}),
		fluxObject("notification.toolkit.fluxcd.io/v1beta3", "Alert", ns, alertName, map[string]any{
			"providerRef":   map[string]any{"name": providerName},
			"eventSeverity": "info",
			"eventSources":  []any{map[string]any{"kind": "Kustomization", "name": kustomizationName}},
		}),
	}
}
