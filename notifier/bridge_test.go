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
	"context"
	"encoding/json"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	notificationv1 "github.com/fluxcd/notification-controller/api/v1beta3"
	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/tenancy"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

func TestAllows(t *testing.T) {
	tests := map[string]struct {
		alert v1alpha1.AlertSeverity
		want  map[Severity]bool
	}{
		"default is info": {alert: "", want: map[Severity]bool{SeverityInfo: true, SeverityWarn: true, SeverityError: true}},
		"info":            {alert: "info", want: map[Severity]bool{SeverityInfo: true, SeverityWarn: true, SeverityError: true}},
		"warn":            {alert: "warn", want: map[Severity]bool{SeverityInfo: false, SeverityWarn: true, SeverityError: true}},
		"error":           {alert: "error", want: map[Severity]bool{SeverityInfo: false, SeverityWarn: false, SeverityError: true}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got := map[Severity]bool{}
			for s := range tt.want {
				got[s] = Allows(tt.alert, s)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Allows(%q, …) (-want +got):\n%s", tt.alert, diff)
			}
		})
	}
}

// TestSeverityFilter sends one event of each severity to three Providers
// with the three alert severities and counts what each received.
func TestSeverityFilter(t *testing.T) {
	sinks := map[v1alpha1.AlertSeverity]*sink{}
	var objs []client.Object
	var alerts []v1alpha1.CanaryAlert
	for _, sev := range []v1alpha1.AlertSeverity{"info", "warn", "error"} {
		sinks[sev] = newSink(t, nil)
		name := "p-" + string(sev)
		objs = append(objs, provider(name, "generic", func(p *notificationv1.Provider) { p.Spec.Address = sinks[sev].URL }))
		alerts = append(alerts, alertFor(name, sev))
	}
	b := testBridge(t, Options{Mode: ModeDirect, Reader: fakeReader(t, objs...)})
	c := withAlerts(testCanary(), alerts...)
	for _, sev := range []Severity{SeverityInfo, SeverityWarn, SeverityError} {
		e := promoted()
		e.Severity, e.Reason = sev, "Event"+string(sev)
		if !deliverNow(b, c, e) {
			t.Fatalf("delivery of a %s event failed", sev)
		}
	}
	got := map[v1alpha1.AlertSeverity][]string{}
	for sev, s := range sinks {
		got[sev] = []string{}
		for _, r := range s.got() {
			var ev eventv1.Event
			if err := json.Unmarshal(r.body, &ev); err != nil {
				t.Fatal(err)
			}
			got[sev] = append(got[sev], ev.Reason+"/"+ev.Severity)
		}
	}
	want := map[v1alpha1.AlertSeverity][]string{
		"info":  {"Eventinfo/info", "Eventwarn/info", "Eventerror/error"},
		"warn":  {"Eventwarn/info", "Eventerror/error"},
		"error": {"Eventerror/error"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events received per alert severity (-want +got):\n%s", diff)
	}
}

func TestProviderSuspendAndTimeout(t *testing.T) {
	slow := make(chan struct{})
	hang := newSink(t, func(int) int { <-slow; return 200 })
	t.Cleanup(func() { close(slow) }) // before the sink closes: cleanups run last-in first-out
	suspended := newSink(t, nil)
	b := testBridge(t, Options{Mode: ModeDirect, Reader: fakeReader(t,
		provider("suspended", "generic", func(p *notificationv1.Provider) { p.Spec.Address = suspended.URL; p.Spec.Suspend = true }),
		provider("slow", "generic", func(p *notificationv1.Provider) {
			p.Spec.Address = hang.URL
			p.Spec.Timeout = &metav1.Duration{Duration: 200 * time.Millisecond}
		}),
	)})
	c := withAlerts(testCanary(), alertFor("suspended", "info"), alertFor("slow", "info"))
	start := time.Now()
	if deliverNow(b, c, promoted()) {
		t.Error("delivery to a Provider that never answers succeeded")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("delivery took %s, want the Provider's 200ms timeout to end it", d)
	}
	if n := len(suspended.got()); n != 0 {
		t.Errorf("suspended Provider received %d requests", n)
	}
}

func TestRetries(t *testing.T) {
	s := newSink(t, func(n int) int {
		if n < 3 {
			return http.StatusBadGateway
		}
		return http.StatusOK
	})
	b := testBridge(t, Options{Mode: ModeDirect, Reader: fakeReader(t, provider("flaky", "generic", func(p *notificationv1.Provider) { p.Spec.Address = s.URL }))})
	if !deliverNow(b, withAlerts(testCanary(), alertFor("flaky", "info")), promoted()) {
		t.Fatal("delivery failed despite retries")
	}
	if n := len(s.got()); n != 3 {
		t.Errorf("sink received %d attempts, want 3 (two 502s, then 200)", n)
	}
}

// ncEvents decodes what a fake notification-controller received.
func ncEvents(t *testing.T, s *sink) []eventv1.Event {
	t.Helper()
	var evs []eventv1.Event
	for _, r := range s.got() {
		var ev eventv1.Event
		if err := json.Unmarshal(r.body, &ev); err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	return evs
}

// kustomization is a Kustomization whose inventory lists the test
// Deployment apps/podinfo.
func kustomization(name, namespace, revision string) *unstructured.Unstructured {
	return fluxOwner("kustomize.toolkit.fluxcd.io/v1", "Kustomization", name, namespace, revision, "apps_podinfo_apps_Deployment")
}

func fluxOwner(apiVersion, kind, name, namespace, revision string, inventory ...string) *unstructured.Unstructured {
	entries := []any{}
	for _, id := range inventory {
		entries = append(entries, map[string]any{"id": id, "v": "v1"})
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": namespace},
		"status":   map[string]any{"lastAppliedRevision": revision, "inventory": map[string]any{"entries": entries}},
	}}
}

func appliedBy(name, namespace string) *testobj.DeploymentWrapper {
	return testobj.MakeDeployment("podinfo", "apps").
		Label("kustomize.toolkit.fluxcd.io/name", name).Label("kustomize.toolkit.fluxcd.io/namespace", namespace)
}

func TestOwnerMode(t *testing.T) {
	nc := newSink(t, func(int) int { return http.StatusAccepted })
	b := testBridge(t, Options{Mode: ModeOwner, EventsAddr: nc.URL, Reader: fakeReader(t,
		appliedBy("apps", "flux-system").Obj(), kustomization("apps", "flux-system", "main@sha1:ffff"))})
	c := testCanary()
	step := Event{Severity: SeverityInfo, Reason: "WeightIncreased", Message: "advance podinfo canary weight 20", Phase: v1alpha1.PhaseProgressing, Weight: 20}
	if !deliverNow(b, c, step) || !deliverNow(b, c, promoted()) {
		t.Fatal("delivery failed")
	}
	evs := ncEvents(t, nc)
	if len(evs) != 3 {
		t.Fatalf("notification-controller received %d events, want 3 (step, final, commit status)", len(evs))
	}
	wantObj := corev1.ObjectReference{APIVersion: "kustomize.toolkit.fluxcd.io/v1", Kind: "Kustomization", Namespace: "flux-system", Name: "apps"}
	for _, ev := range evs {
		if diff := cmp.Diff(wantObj, ev.InvolvedObject); diff != "" {
			t.Errorf("involvedObject (-want +got):\n%s", diff)
		}
		if ev.ReportingController != "serin" {
			t.Errorf("reportingController = %q", ev.ReportingController)
		}
	}
	const g = "kustomize.toolkit.fluxcd.io/"
	// The step event has no revision in the Event: the owner's is looked up.
	wantStep := map[string]string{g + "canary": "apps/podinfo", g + "phase": "Progressing", g + "weight": "20", g + "revision": "main@sha1:ffff"}
	if diff := cmp.Diff(wantStep, withoutToken(t, evs[0].Metadata, g)); diff != "" {
		t.Errorf("step metadata (-want +got):\n%s", diff)
	}
	wantFinal := map[string]string{g + "canary": "apps/podinfo", g + "phase": "Succeeded", g + "weight": "0", g + "revision": testRevision}
	if diff := cmp.Diff(wantFinal, withoutToken(t, evs[1].Metadata, g)); diff != "" {
		t.Errorf("final metadata (-want +got):\n%s", diff)
	}
	wantFinal[g+"commit_status"] = "update"
	if diff := cmp.Diff(wantFinal, withoutToken(t, evs[2].Metadata, g)); diff != "" {
		t.Errorf("commit-status companion metadata (-want +got):\n%s", diff)
	}
	if evs[1].Metadata[g+"token"] == evs[2].Metadata[g+"token"] || evs[0].Metadata[g+"token"] == evs[1].Metadata[g+"token"] {
		t.Error("distinct events share a token: notification-controller would rate-limit them")
	}
}

func withoutToken(t *testing.T, m map[string]string, group string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for k, v := range m {
		if k == group+"token" {
			if len(v) < 16 {
				t.Errorf("token %q too short", v)
			}
			continue
		}
		out[k] = v
	}
	return out
}

func TestOwnerMode_FailureHasNoCommitStatusCompanion(t *testing.T) {
	nc := newSink(t, func(int) int { return http.StatusAccepted })
	b := testBridge(t, Options{EventsAddr: nc.URL, Reader: fakeReader(t, appliedBy("apps", "flux-system").Obj())})
	if !deliverNow(b, testCanary(), halted()) {
		t.Fatal("delivery failed")
	}
	evs := ncEvents(t, nc)
	if len(evs) != 1 || evs[0].Severity != "error" {
		t.Fatalf("got %d events (%+v), want one error event: notification-controller passes errors to commit-status Providers itself", len(evs), evs)
	}
}

func TestModes(t *testing.T) {
	tests := map[string]struct {
		mode       Mode
		annotation string
		target     client.Object
		owners     []client.Object // default: the Kustomization flux-system/apps listing the target
		tenancy    tenancy.Options
		wantKind   string // "" means nothing sent to notification-controller
		wantGroup  string
	}{
		"owner whose inventory does not list the target": {mode: ModeOwner, target: appliedBy("flux-system", "flux-system").Obj(),
			owners:   []client.Object{fluxOwner("kustomize.toolkit.fluxcd.io/v1", "Kustomization", "flux-system", "flux-system", "main@sha1:ffff", "flux-system_source-controller_apps_Deployment")},
			wantKind: "Canary", wantGroup: "serin.dev"},
		"owner in another namespace under --no-cross-namespace-refs": {mode: ModeOwner, target: appliedBy("apps", "flux-system").Obj(),
			tenancy: tenancy.Options{NoCrossNamespaceRefs: true}, wantKind: "Canary", wantGroup: "serin.dev"},
		"owner":                          {mode: ModeOwner, target: appliedBy("apps", "flux-system").Obj(), wantKind: "Kustomization", wantGroup: "kustomize.toolkit.fluxcd.io"},
		"owner of a helm release":        {mode: ModeOwner, target: testobj.MakeDeployment("podinfo", "apps").Label("helm.toolkit.fluxcd.io/name", "web").Label("helm.toolkit.fluxcd.io/namespace", "apps").Obj(), wantKind: "HelmRelease", wantGroup: "helm.toolkit.fluxcd.io"},
		"owner falls back to canary":     {mode: ModeOwner, target: testobj.MakeDeployment("podinfo", "apps").Obj(), wantKind: "Canary", wantGroup: "serin.dev"},
		"owner without a target":         {mode: ModeOwner, wantKind: "Canary", wantGroup: "serin.dev"},
		"canary":                         {mode: ModeCanary, target: appliedBy("apps", "flux-system").Obj(), wantKind: "Canary", wantGroup: "serin.dev"},
		"direct":                         {mode: ModeDirect, target: appliedBy("apps", "flux-system").Obj()},
		"annotation overrides to canary": {mode: ModeOwner, annotation: "canary", target: appliedBy("apps", "flux-system").Obj(), wantKind: "Canary", wantGroup: "serin.dev"},
		"annotation overrides to direct": {mode: ModeOwner, annotation: "direct", target: appliedBy("apps", "flux-system").Obj()},
		"annotation overrides to owner":  {mode: ModeDirect, annotation: "owner", target: appliedBy("apps", "flux-system").Obj(), wantKind: "Kustomization", wantGroup: "kustomize.toolkit.fluxcd.io"},
		"bad annotation is ignored":      {mode: ModeCanary, annotation: "slack", wantKind: "Canary", wantGroup: "serin.dev"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			nc := newSink(t, func(int) int { return http.StatusAccepted })
			objs := tt.owners
			if objs == nil {
				objs = []client.Object{kustomization("apps", "flux-system", "main@sha1:ffff"),
					fluxOwner("helm.toolkit.fluxcd.io/v2", "HelmRelease", "web", "apps", "1.0.0", "apps_podinfo_apps_Deployment")}
			}
			if tt.target != nil {
				objs = append(objs, tt.target)
			}
			reader := fakeReader(t, objs...)
			b := testBridge(t, Options{Mode: tt.mode, EventsAddr: nc.URL, Reader: reader,
				Tenancy: tenancy.Static(nil, reader, tt.tenancy)})
			c := testCanary()
			if tt.annotation != "" {
				c.Annotations = map[string]string{v1alpha1.NotificationModeAnnotation: tt.annotation}
			}
			e := promoted()
			e.Final = false
			if !deliverNow(b, c, e) {
				t.Fatal("delivery failed")
			}
			evs := ncEvents(t, nc)
			if tt.wantKind == "" {
				if len(evs) != 0 {
					t.Fatalf("notification-controller received %d events in direct mode", len(evs))
				}
				return
			}
			if len(evs) != 1 {
				t.Fatalf("notification-controller received %d events, want 1", len(evs))
			}
			if evs[0].InvolvedObject.Kind != tt.wantKind {
				t.Errorf("involvedObject.kind = %s, want %s", evs[0].InvolvedObject.Kind, tt.wantKind)
			}
			for k := range evs[0].Metadata {
				if len(k) <= len(tt.wantGroup) || k[:len(tt.wantGroup)+1] != tt.wantGroup+"/" {
					t.Errorf("metadata key %s not under %s/: notification-controller would drop it", k, tt.wantGroup)
				}
			}
		})
	}
}

// TestDuplicateIsDelivered: notification-controller answers 429 to an event
// it already has within its rate-limit window; that is no failure and no
// reason to retry.
func TestDuplicateIsDelivered(t *testing.T) {
	nc := newSink(t, func(int) int { return http.StatusTooManyRequests })
	b := testBridge(t, Options{Mode: ModeCanary, EventsAddr: nc.URL, Reader: fakeReader(t)})
	if !deliverNow(b, testCanary(), halted()) {
		t.Error("a 429 from notification-controller counted as a failure")
	}
	if n := len(nc.got()); n != 1 {
		t.Errorf("notification-controller received %d attempts, want 1 (no retry of a duplicate)", n)
	}
}

func TestTokenIdentifiesTransitions(t *testing.T) {
	c := testCanary()
	f := func(c *v1alpha1.Canary, e Event) string {
		return eventFields{canary: c, event: e, revision: e.Revision, at: testTime}.token()
	}
	base := f(c, promoted())
	if again := f(c.DeepCopy(), promoted()); again != base {
		t.Error("the same event for the same state got two tokens")
	}
	other := promoted()
	other.Weight = 10
	moved := c.DeepCopy()
	moved.Status.LastTransitionTime = &metav1.MicroTime{Time: testTime.Add(time.Minute)}
	for name, tok := range map[string]string{"weight": f(c, other), "transition time": f(moved, promoted())} {
		if tok == base {
			t.Errorf("a different %s gave the same token", name)
		}
	}
}

// TestNotifyNeverBlocks fills the queues behind a receiver that never
// answers: Notify must return at once and drop what does not fit.
func TestNotifyNeverBlocks(t *testing.T) {
	release := make(chan struct{})
	var calls atomic.Int64
	hang := newSink(t, func(int) int { calls.Add(1); <-release; return 200 })
	t.Cleanup(func() { close(release) })
	b := testBridge(t, Options{Mode: ModeCanary, EventsAddr: hang.URL, Reader: fakeReader(t), Workers: 2, QueueSize: 5, EventsTimeout: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = b.Start(ctx) }()

	droppedBefore := metricValue(t, bridgeMetrics.events.WithLabelValues("dropped"))
	queuedBefore := metricValue(t, bridgeMetrics.queued)
	const n = 1000
	start := time.Now()
	for i := range n {
		c := testCanary()
		c.Name = "podinfo-" + string(rune('a'+i%26))
		b.Notify(ctx, c, promoted())
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("%d Notify calls took %s with stuck workers, want well under a second", n, d)
	}
	_, _, dropped := b.Stats()
	// At most 2 in flight and 2×5 queued; the rest is dropped.
	if dropped < n-12 {
		t.Errorf("dropped %d events, want at least %d", dropped, n-12)
	}
	// What /metrics says: every drop counted, and what waits for a worker.
	if got := metricValue(t, bridgeMetrics.events.WithLabelValues("dropped")) - droppedBefore; got != float64(dropped) {
		t.Errorf("serin_notification_events_total{result=dropped} grew by %.0f, want %d", got, dropped)
	}
	// Each of the 2 workers holds at most one, in flight.
	if got := metricValue(t, bridgeMetrics.queued) - queuedBefore; got < float64(n-dropped-2) || got > float64(n-dropped) {
		t.Errorf("serin_notification_events_queued grew by %.0f, want %d to %d (%d notified, %d dropped)", got, n-dropped-2, n-dropped, n, dropped)
	}
}

func TestQueueDeliversInOrder(t *testing.T) {
	nc := newSink(t, func(int) int { return http.StatusAccepted })
	b := testBridge(t, Options{Mode: ModeCanary, EventsAddr: nc.URL, Reader: fakeReader(t), Workers: 3})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = b.Start(ctx) }()
	c := testCanary()
	var want []string
	for i := range 20 {
		e := promoted()
		e.Final = false
		e.Weight = i
		e.Reason = "Step" + string(rune('A'+i))
		want = append(want, e.Reason)
		b.Notify(ctx, c, e)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(nc.got()) < len(want) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	var got []string
	for _, ev := range ncEvents(t, nc) {
		got = append(got, ev.Reason)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events of one Canary out of order (-want +got):\n%s", diff)
	}
}

// TestCommitStatusOnlyOnThePhaseChange: the reconciler flags every event
// emitted in a final phase as Final, including the NewRevision event of the
// next rollout (still Succeeded at that point); only the Succeeded phase
// change may mark a commit.
func TestCommitStatusOnlyOnThePhaseChange(t *testing.T) {
	next := Event{Severity: SeverityInfo, Reason: "NewRevision", Message: "new revision 7c9d of podinfo detected",
		Phase: v1alpha1.PhaseSucceeded, Revision: notifyRevisionForTest, Final: true}
	for name, tt := range map[string]struct {
		e    Event
		want bool
	}{
		"phase change to Succeeded": {e: promoted(), want: true},
		"next rollout starting":     {e: next, want: false},
		"halted":                    {e: halted(), want: false},
	} {
		f := eventFields{canary: testCanary(), event: tt.e, revision: tt.e.Revision, at: testTime}
		if got := len(f.fluxEvents(corev1.ObjectReference{Kind: "Kustomization"}, "kustomize.toolkit.fluxcd.io", "serin", "x")) == 2; got != tt.want {
			t.Errorf("%s: commit-status companion = %v, want %v", name, got, tt.want)
		}
	}
}

const notifyRevisionForTest = "main@sha1:7c9d7c9d7c9d7c9d7c9d7c9d7c9d7c9d7c9d7c9d"

// TestDirect_CrossNamespaceProviderRefused: under --no-cross-namespace-refs
// a Canary in apps cannot post through flux-system's Provider (its token,
// its channel); a Provider in its own namespace still works.
func TestDirect_CrossNamespaceProviderRefused(t *testing.T) {
	s := newSink(t, func(int) int { return http.StatusOK })
	theirs := provider("slack", notificationv1.SlackProvider, func(p *notificationv1.Provider) { p.Spec.Address = s.URL + "/theirs" })
	ours := provider("slack", notificationv1.SlackProvider, func(p *notificationv1.Provider) { p.Namespace = "apps"; p.Spec.Address = s.URL + "/ours" })
	reader := fakeReader(t, theirs, ours)
	b := testBridge(t, Options{Mode: ModeDirect, Reader: reader, Tenancy: tenancy.Static(nil, reader, tenancy.Options{NoCrossNamespaceRefs: true})})
	if deliverNow(b, withAlerts(testCanary(), alertFor("slack", "info")), promoted()) {
		t.Error("delivered through a Provider in another namespace")
	}
	if got := s.got(); len(got) != 0 {
		t.Fatalf("the other namespace's Provider received %d requests", len(got))
	}
	own := alertFor("slack", "info")
	own.ProviderRef.Namespace = ""
	if !deliverNow(b, withAlerts(testCanary(), own), promoted()) {
		t.Fatal("delivery through the Canary's own Provider failed")
	}
	if got := s.got(); len(got) != 1 || got[0].path != "/ours" {
		t.Errorf("requests = %+v, want one to /ours", got)
	}
}

// metricValue reads a counter or a gauge of the Bridge's metrics.
func metricValue(t *testing.T, c prometheus.Metric) float64 {
	t.Helper()
	m := &dto.Metric{}
	if err := c.Write(m); err != nil {
		t.Fatal(err)
	}
	if m.Counter != nil {
		return m.Counter.GetValue()
	}
	return m.Gauge.GetValue()
}
