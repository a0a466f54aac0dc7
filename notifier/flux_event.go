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

package notifier

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// Metadata keys of serin's events, prefixed with the involved object's API
// group: notification-controller keeps only keys under that group (or
// event.toolkit.fluxcd.io/) and strips the prefix before it calls Providers.
const (
	// MetaRevision is the Flux source revision being rolled out
	// (main@sha1:…); commit-status Providers mark that commit.
	MetaRevision = eventv1.MetaRevisionKey
	// MetaCanary is the Canary, as namespace/name.
	MetaCanary = "canary"
	// MetaPhase is the Canary's phase after the event.
	MetaPhase = "phase"
	// MetaWeight is the canary's traffic percentage.
	MetaWeight = "weight"
	// MetaToken identifies one transition, so that notification-controller's
	// rate limit drops only true repeats; it never reaches Providers.
	MetaToken = eventv1.MetaTokenKey
	// MetaCommitStatus set to "update" marks the event commit-status
	// Providers turn into a commit status. Chat Providers never see such
	// events, so serin sends it as a companion of the final event of a
	// successful rollout, never instead of it.
	MetaCommitStatus = eventv1.MetaCommitStatusKey
)

// canaryReference is the involvedObject of events about the Canary itself.
func canaryReference(c *v1alpha1.Canary) corev1.ObjectReference {
	return corev1.ObjectReference{
		APIVersion:      v1alpha1.GroupVersion.String(),
		Kind:            v1alpha1.CanaryKind,
		Namespace:       c.Namespace,
		Name:            c.Name,
		UID:             c.UID,
		ResourceVersion: c.ResourceVersion,
	}
}

// fluxSeverity maps a serin severity onto notification-controller's two:
// only failures are errors. Waits (warn) are info so that a closed gate
// never marks a commit failed through a commit-status Provider; an Alert
// with eventSeverity: error receives exactly serin's error events.
func fluxSeverity(s Severity) string {
	if s == SeverityError {
		return eventv1.EventSeverityError
	}
	return eventv1.EventSeverityInfo
}

// eventFields are the facts of one event, ready to become Flux events.
type eventFields struct {
	canary   *v1alpha1.Canary
	event    Event
	revision string
	at       time.Time
}

// metadata returns the event's metadata with every key prefixed by group
// and a slash; an empty group gives bare keys (what Providers receive).
func (f eventFields) metadata(group string) map[string]string {
	p := ""
	if group != "" {
		p = group + "/"
	}
	m := map[string]string{
		p + MetaCanary: f.canary.Namespace + "/" + f.canary.Name,
		p + MetaWeight: strconv.Itoa(f.event.Weight),
	}
	if f.event.Phase != "" {
		m[p+MetaPhase] = string(f.event.Phase)
	}
	if f.revision != "" {
		m[p+MetaRevision] = f.revision
	}
	return m
}

// fluxEvents returns the Flux events for notification-controller about
// obj (whose API group is group): the event itself and, for the final
// event of a successful rollout, a commit-status companion. Failures need
// no companion: notification-controller passes error events to
// commit-status Providers anyway.
func (f eventFields) fluxEvents(obj corev1.ObjectReference, group, controller, instance string) []eventv1.Event {
	token := f.token()
	meta := f.metadata(group)
	meta[group+"/"+MetaToken] = token
	events := []eventv1.Event{f.fluxEvent(obj, meta, controller, instance)}
	if f.marksCommit() {
		cs := f.metadata(group)
		cs[group+"/"+MetaToken] = token + "-commit-status"
		cs[group+"/"+MetaCommitStatus] = eventv1.MetaCommitStatusUpdateValue
		events = append(events, f.fluxEvent(obj, cs, controller, instance))
	}
	return events
}

// marksCommit says whether the event ends a successful rollout and so
// gets a commit-status companion. Only the phase-change event counts (its
// reason is the phase): the reconciler also flags as Final any other event
// emitted while the Canary is still in a final phase, such as the
// NewRevision event of the next rollout, which must not mark its commit.
func (f eventFields) marksCommit() bool {
	return f.event.Final && f.event.Severity != SeverityError && f.event.Reason == string(f.event.Phase)
}

// providerEvent is the event as notification-controller hands it to a
// Provider: about the Canary, metadata keys without a prefix, no token.
func (f eventFields) providerEvent(controller, instance string) eventv1.Event {
	return f.fluxEvent(canaryReference(f.canary), f.metadata(""), controller, instance)
}

func (f eventFields) fluxEvent(obj corev1.ObjectReference, meta map[string]string, controller, instance string) eventv1.Event {
	return eventv1.Event{
		InvolvedObject:      obj,
		Severity:            fluxSeverity(f.event.Severity),
		Timestamp:           metav1.NewTime(f.at),
		Message:             f.event.Message,
		Reason:              f.event.Reason,
		Metadata:            meta,
		ReportingController: controller,
		ReportingInstance:   instance,
	}
}

// token identifies the transition: the same event emitted twice for the
// same state (a retried reconcile) gets the same token, and
// notification-controller drops the repeat; any distinct transition gets a
// distinct one.
func (f eventFields) token() string {
	st := f.canary.Status
	lastTransition := ""
	if st.LastTransitionTime != nil {
		lastTransition = st.LastTransitionTime.UTC().Format(time.RFC3339Nano)
	}
	h := sha256.New()
	for _, s := range []string{
		string(f.canary.UID), f.canary.Namespace, f.canary.Name,
		f.event.Reason, f.event.Message, string(f.event.Phase), strconv.Itoa(f.event.Weight), f.revision,
		strconv.Itoa(st.FailedChecks), strconv.Itoa(st.Iterations), lastTransition,
	} {
		fmt.Fprintf(h, "%d:%s;", len(s), s)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
