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

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serin-dev/serin/analysis"
	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testutil"
)

// errorRateTemplate creates a MetricTemplate whose query is the 5xx
// percentage of the requests the canary Service served, as Traefik counted
// them (its per-backend series), through the real Prometheus.
func errorRateTemplate(t testing.TB, ns string) v1alpha1.CanaryMetric {
	t.Helper()
	backend := `service="{{ namespace }}-{{ service }}-canary-http-` + fmt.Sprint(appPort) + `@kubernetesgateway"`
	tpl := &v1alpha1.MetricTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "error-rate", Namespace: ns},
		Spec: v1alpha1.MetricTemplateSpec{
			Provider: v1alpha1.MetricProvider{Type: v1alpha1.PrometheusProvider, Address: prom.URL},
			Query: `100 - 100 * sum(rate(traefik_service_requests_total{` + backend + `,code!~"5.."}[{{ interval }}]) or vector(0))
  / sum(rate(traefik_service_requests_total{` + backend + `}[{{ interval }}]))`,
		},
	}
	if err := k8s.Create(context.Background(), tpl); err != nil {
		t.Fatal(err)
	}
	return v1alpha1.CanaryMetric{
		Name:           "error-rate",
		TemplateRef:    &v1alpha1.TemplateReference{Name: "error-rate"},
		ThresholdRange: &v1alpha1.ThresholdRange{Max: ptrFloat(1)},
		Interval:       &metav1.Duration{Duration: 3 * time.Second},
	}
}

func ptrFloat(f float64) *float64 { return &f }

// waitForPhase waits until the canary reaches a phase.
func waitForPhase(g Gomega, c *v1alpha1.Canary, phase v1alpha1.CanaryPhase, timeout time.Duration) {
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(context.Background(), client.ObjectKeyFromObject(c), c)).To(Succeed())
		g.Expect(c.Status.Phase).To(Equal(phase))
	}, timeout, 100*time.Millisecond).Should(Succeed(), func() string {
		// What the Canary says of itself tells a failure apart from a
		// slow machine: its conditions' reasons and messages.
		said := ""
		for _, cond := range c.Status.Conditions {
			said += fmt.Sprintf("\n  %s=%s %s: %s", cond.Type, cond.Status, cond.Reason, cond.Message)
		}
		return fmt.Sprintf("canary %s/%s never reached %s; it says:%s", c.Namespace, c.Name, phase, said)
	})
}

// setImage rolls a new revision of a Deployment, as a Git commit would.
func setImage(g Gomega, ns, name, image string) {
	d := &appsv1.Deployment{}
	g.Expect(k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, d)).To(Succeed())
	patch := client.MergeFrom(d.DeepCopy())
	d.Spec.Template.Spec.Containers[0].Image = image
	g.Expect(k8s.Patch(context.Background(), d, patch)).To(Succeed())
}

// transcript records every (phase, weight) the canary goes through,
// collapsing repeats, from two independent watches on the Canary (one on
// its namespace, one selecting it by name) merged by resource version.
//
// One watch alone once skipped a status write in CI (issue #19's run at
// 935b21d): the agent's log showed its informer holding the write (canary
// 40) 50 ms after it, yet the test's watch, still open, went from
// canary=20 to canary=60. The transcript checks what serin wrote, not how
// one stream of the API server's watch cache delivered it: a write either
// watch saw counts, so that only a status serin never wrote fails the
// golden, and a failed test logs what each watch delivered.
type transcript struct {
	mu sync.Mutex
	// seen is each status delivered, by resource version.
	seen map[int64]transcriptEvent
	// events are every watch event, uncollapsed, with its watch, resource
	// version and the steps recorded: what a failed test logs, so that a
	// missing line says whether the status was never written or the
	// watches did not deliver it.
	events []string
}

type transcriptEvent struct {
	line string
	// watches are the watches that delivered it.
	watches []string
}

func recordTranscript(t testing.TB, c *v1alpha1.Canary) *transcript {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	tr := &transcript{seen: map[int64]transcriptEvent{}}
	for name, opts := range map[string][]client.ListOption{
		"namespace": {client.InNamespace(c.Namespace)},
		"name":      {client.InNamespace(c.Namespace), client.MatchingFields{"metadata.name": c.Name}},
	} {
		w, err := k8s.(client.WithWatch).Watch(ctx, &v1alpha1.CanaryList{}, opts...)
		if err != nil {
			t.Fatal(err)
		}
		go tr.follow(name, c.Name, w)
	}
	t.Cleanup(func() {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		for rv, e := range tr.seen {
			if len(e.watches) == 1 {
				t.Logf("only the %s watch delivered rv=%d (%s)", e.watches[0], rv, e.line)
			}
		}
		if t.Failed() {
			t.Logf("the watches of canary %s/%s delivered:\n%s", c.Namespace, c.Name, strings.Join(tr.events, "\n"))
		}
	})
	return tr
}

// follow records what one watch delivers until it ends.
func (tr *transcript) follow(watchName, name string, w watch.Interface) {
	defer w.Stop()
	for ev := range w.ResultChan() {
		obj, ok := ev.Object.(*v1alpha1.Canary)
		if !ok {
			tr.mu.Lock()
			tr.events = append(tr.events, fmt.Sprintf("%-9s %s %T %v", watchName, ev.Type, ev.Object, ev.Object))
			tr.mu.Unlock()
			continue
		}
		if obj.Name != name || obj.Status.Phase == "" {
			continue
		}
		line := fmt.Sprintf("%-16s canary=%d", obj.Status.Phase, obj.Status.CanaryWeight)
		rv, err := strconv.ParseInt(obj.ResourceVersion, 10, 64)
		tr.mu.Lock()
		tr.events = append(tr.events, fmt.Sprintf("%s %-9s %s rv=%s %s steps=%s ready=%q", time.Now().Format("15:04:05.000"), watchName, ev.Type,
			obj.ResourceVersion, line, stepWeights(obj), conditions.GetMessage(obj, meta.ReadyCondition)))
		if err == nil {
			// The testbed's API server serves etcd revisions: integers
			// that order the writes to one object.
			e := tr.seen[rv]
			e.line, e.watches = line, append(e.watches, watchName)
			tr.seen[rv] = e
		}
		tr.mu.Unlock()
	}
	tr.mu.Lock()
	tr.events = append(tr.events, watchName+" watch ended")
	tr.mu.Unlock()
}

// linesLocked returns the (phase, weight) lines in write order, repeats
// collapsed. The caller holds tr.mu.
func (tr *transcript) linesLocked() []string {
	var lines []string
	for _, rv := range slices.Sorted(maps.Keys(tr.seen)) {
		if l := tr.seen[rv].line; len(lines) == 0 || lines[len(lines)-1] != l {
			lines = append(lines, l)
		}
	}
	return lines
}

// stepWeights renders the weight and verdict of each step of the canary's
// current analysis record, oldest first.
func stepWeights(c *v1alpha1.Canary) string {
	if len(c.Status.Analyses) == 0 {
		return "[]"
	}
	var parts []string
	for _, s := range c.Status.Analyses[0].Steps {
		parts = append(parts, fmt.Sprintf("%d:%s", s.Weight, s.Verdict))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// endsWith waits until the watch saw the canary reach phase: a GET may see
// the last status before the watch delivers it.
func (tr *transcript) endsWith(g Gomega, phase v1alpha1.CanaryPhase) {
	g.Eventually(func() string {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		lines := tr.linesLocked()
		if len(lines) == 0 {
			return ""
		}
		return lines[len(lines)-1]
	}, 5*time.Second, 20*time.Millisecond).Should(HavePrefix(string(phase)))
}

// since returns the lines from the first one starting with prefix.
func (tr *transcript) since(prefix string) []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	lines := tr.linesLocked()
	for i, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return lines[i:]
		}
	}
	return nil
}

// compareGolden compares a transcript with testdata/NAME.golden
// (UPDATE_GOLDEN=true rewrites it).
func compareGolden(t testing.TB, name string, lines []string) {
	t.Helper()
	testutil.Golden(t, filepath.Join("testdata", name+".golden"), strings.Join(lines, "\n")+"\n")
}

// sampler records the distinct successive values of probe, every 20 ms,
// until the test ends: what the data plane was told, step by step.
type sampler struct {
	mu     sync.Mutex
	values []string
	// at is when each value was first seen.
	at []time.Time
}

func sample(t testing.TB, probe func() string) *sampler {
	t.Helper()
	s := &sampler{}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			v := probe()
			s.mu.Lock()
			if len(s.values) == 0 || s.values[len(s.values)-1] != v {
				s.values = append(s.values, v)
				s.at = append(s.at, time.Now())
			}
			s.mu.Unlock()
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-done })
	return s
}

// firstAt is when the probe first returned v; zero if it never did.
func (s *sampler) firstAt(v string) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, seen := range s.values {
		if seen == v {
			return s.at[i]
		}
	}
	return time.Time{}
}

func (s *sampler) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.values...)
}

// samplePhases samples the phase of a Canary until the test ends.
func samplePhases(t testing.TB, c *v1alpha1.Canary) *sampler {
	return sample(t, func() string {
		cur := &v1alpha1.Canary{}
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(c), cur); err != nil {
			return ""
		}
		return string(cur.Status.Phase)
	})
}

// routeWeights renders the primary/canary weights of an HTTPRoute.
func routeWeights(ns, name string) func() string {
	return func() string {
		r := &gatewayv1.HTTPRoute{}
		if err := k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, r); err != nil || len(r.Spec.Rules) == 0 {
			return "none"
		}
		var parts []string
		for _, b := range r.Spec.Rules[0].BackendRefs {
			parts = append(parts, fmt.Sprintf("%d", *b.Weight))
		}
		return strings.Join(parts, "/")
	}
}

// webhook is a test gate: it answers with its status code and records the
// payloads it receives.
type webhook struct {
	*httptest.Server
	status   atomic.Int32
	mu       sync.Mutex
	payloads []analysis.Payload
}

func newWebhook(t testing.TB, status int) *webhook {
	t.Helper()
	w := &webhook{}
	w.status.Store(int32(status))
	w.Server = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		var p analysis.Payload
		_ = json.NewDecoder(r.Body).Decode(&p)
		w.mu.Lock()
		w.payloads = append(w.payloads, p)
		w.mu.Unlock()
		rw.WriteHeader(int(w.status.Load()))
	}))
	t.Cleanup(w.Close)
	return w
}

func (w *webhook) received() []analysis.Payload {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]analysis.Payload(nil), w.payloads...)
}
