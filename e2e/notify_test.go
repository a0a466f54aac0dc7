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
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	notificationv1 "github.com/fluxcd/notification-controller/api/v1"
	notificationv1beta3 "github.com/fluxcd/notification-controller/api/v1beta3"
	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
	"github.com/fluxcd/pkg/apis/meta"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testbed"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// notificationController is Flux's notification-controller, started by
// TestMain before the agent, whose --events-addr points at it.
var notificationController *testbed.NotificationController

// kustomizeControllerVersion is the module whose Kustomization CRD the
// notification tests install when the testbed has none yet (the CRD only;
// the tests' Kustomizations are suspended and stand for the object that
// applied a target).
const kustomizeControllerVersion = "v1.9.5"

// notifyRevision returns a Flux Git revision whose hash repeats c.
func notifyRevision(c string) string { return "main@sha1:" + strings.Repeat(c, 40) }

// The default mode end to end: a Deployment applied by a Kustomization, a
// Flux Provider (generic) and Alerts on that Kustomization, and the real
// notification-controller in between. A good revision reaches the info
// Alert with the Git revision and phases, and its final event a second
// time as a commit-status update; a bad one reaches the error Alert.
func TestNotify_OwnerModeThroughNotificationController(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	nc := notifyClient(t)
	info, failures := newEventSink(t), newEventSink(t)
	notifyAlert(t, g, nc, ns, "all", info.URL, "info")
	notifyAlert(t, g, nc, ns, "failures", failures.URL, "error")
	ks := notifyKustomization(t, g, ns, "apps", notifyRevision("1"))
	c := notifyCanary(t, g, ns, ks, nil)

	setLastAppliedRevision(g, ks, notifyRevision("2"))
	setImage(g, ns, "podinfo", "podinfo:v2")
	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 60*time.Second)

	var good []eventv1.Event
	g.Eventually(func(g Gomega) {
		good = rolloutEvents(info.events(t), notifyRevision("2"))
		g.Expect(good).To(ContainElement(HaveField("Metadata", HaveKeyWithValue("commit_status", "update"))), "the commit-status update of the final event")
	}, 10*time.Second, 100*time.Millisecond).Should(Succeed())
	logEvents(t, "info Alert", info.events(t))
	phases := map[string]bool{}
	for _, ev := range good {
		g.Expect(ev.InvolvedObject.Kind).To(Equal("Kustomization"))
		g.Expect(ev.InvolvedObject.Name).To(Equal("apps"))
		g.Expect(ev.InvolvedObject.Namespace).To(Equal(ns))
		g.Expect(ev.ReportingController).To(Equal("serin"))
		// notification-controller strips the group prefix and drops the token.
		g.Expect(ev.Metadata).To(HaveKeyWithValue("canary", ns+"/podinfo"))
		g.Expect(ev.Metadata).To(HaveKey("weight"))
		g.Expect(ev.Metadata).NotTo(HaveKey("token"))
		phases[ev.Metadata["phase"]] = true
	}
	g.Expect(phases).To(HaveKey("Progressing"))
	g.Expect(phases).To(HaveKey("Succeeded"))
	final := 0
	for _, ev := range good {
		if ev.Metadata["phase"] == "Succeeded" && ev.Reason == "Succeeded" {
			final++
		}
	}
	g.Expect(final).To(Equal(2), "the final event and its commit-status companion")
	g.Expect(info.requests()[0].header.Get("gotk-component")).To(Equal("serin"))
	g.Expect(failures.events(t)).To(BeEmpty(), "a good revision raises no error event")

	// Kubernetes Events are still recorded on the Canary.
	var kevents corev1.EventList
	g.Expect(k8s.List(ctx, &kevents, client.InNamespace(ns), client.MatchingFields{"involvedObject.kind": "Canary"})).To(Succeed())
	reasons := map[string]bool{}
	for _, e := range kevents.Items {
		reasons[e.Reason] = true
	}
	g.Expect(reasons).To(HaveKey("Succeeded"))

	setLastAppliedRevision(g, ks, notifyRevision("3"))
	releaseRevision(g, ns, "podinfo", "podinfo:v3", erroring(50))
	waitForPhase(g, c, v1alpha1.PhaseFailed, 60*time.Second)
	g.Eventually(func(g Gomega) {
		bad := rolloutEvents(failures.events(t), notifyRevision("3"))
		g.Expect(bad).To(ContainElement(HaveField("Metadata", HaveKeyWithValue("phase", "Failed"))))
	}, 10*time.Second, 100*time.Millisecond).Should(Succeed())
	logEvents(t, "error Alert", failures.events(t))
	for _, ev := range failures.events(t) {
		g.Expect(ev.Severity).To(Equal("error"), "the error Alert received %s: %s", ev.Reason, ev.Message)
		g.Expect(ev.Metadata).NotTo(HaveKey("commit_status"))
	}
}

// Direct mode (here by annotation): the agent posts to the Providers of
// spec.alerts itself, as notification-controller would (a signed generic
// event, a Slack message), and sends nothing to notification-controller,
// whose Alert on the Kustomization stays silent.
func TestNotify_DirectModeToProviders(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	nc := notifyClient(t)
	viaController := newEventSink(t)
	notifyAlert(t, g, nc, ns, "all", viaController.URL, "info")
	signed, slack := newEventSink(t), newEventSink(t)
	const key = "e2e-hmac-key"
	g.Expect(nc.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "hmac", Namespace: ns},
		StringData: map[string]string{"address": signed.URL + "/hook", "token": key}})).To(Succeed())
	g.Expect(nc.Create(ctx, &notificationv1beta3.Provider{ObjectMeta: metav1.ObjectMeta{Name: "signed", Namespace: ns},
		Spec: notificationv1beta3.ProviderSpec{Type: "generic-hmac", SecretRef: &meta.LocalObjectReference{Name: "hmac"}}})).To(Succeed())
	g.Expect(nc.Create(ctx, &notificationv1beta3.Provider{ObjectMeta: metav1.ObjectMeta{Name: "slack", Namespace: ns},
		Spec: notificationv1beta3.ProviderSpec{Type: "slack", Channel: "#deploys", Address: slack.URL + "/services/T0/B0/X"}})).To(Succeed())
	ks := notifyKustomization(t, g, ns, "apps", notifyRevision("4"))
	c := notifyCanary(t, g, ns, ks, func(c *v1alpha1.Canary) {
		c.Annotations = map[string]string{v1alpha1.NotificationModeAnnotation: "direct"}
		c.Spec.Alerts = []v1alpha1.CanaryAlert{
			{Name: "signed", ProviderRef: meta.NamespacedObjectReference{Name: "signed"}, Severity: "info"},
			{Name: "slack", ProviderRef: meta.NamespacedObjectReference{Name: "slack"}, Severity: "info"},
		}
	})

	setLastAppliedRevision(g, ks, notifyRevision("5"))
	setImage(g, ns, "podinfo", "podinfo:v2")
	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 60*time.Second)

	g.Eventually(func(g Gomega) {
		g.Expect(rolloutEvents(signed.events(t), notifyRevision("5"))).To(ContainElement(HaveField("Reason", "Succeeded")))
	}, 10*time.Second, 100*time.Millisecond).Should(Succeed())
	logEvents(t, "generic-hmac Provider", signed.events(t))
	for _, r := range signed.requests() {
		mac := hmac.New(sha256.New, []byte(key))
		mac.Write(r.body)
		g.Expect(r.header.Get("X-Signature")).To(Equal("sha256="+hex.EncodeToString(mac.Sum(nil))), "signature of %s", r.body)
		g.Expect(r.path).To(Equal("/hook"))
		var ev eventv1.Event
		g.Expect(json.Unmarshal(r.body, &ev)).To(Succeed())
		g.Expect(ev.InvolvedObject.Kind).To(Equal("Canary"))
		g.Expect(ev.Metadata).NotTo(HaveKey("commit_status"), "direct mode sends no commit-status companion")
	}

	var messages []slackMessage
	g.Eventually(func(g Gomega) {
		messages = slack.slackMessages(t)
		g.Expect(messages).To(ContainElement(HaveField("Attachments", ContainElement(HaveField("Fields",
			ContainElement(slackField{Title: "phase", Value: "Succeeded"}))))))
	}, 10*time.Second, 100*time.Millisecond).Should(Succeed())
	for _, m := range messages {
		g.Expect(m.Channel).To(Equal("#deploys"))
		g.Expect(m.Username).To(Equal("serin"))
		g.Expect(m.Attachments).To(HaveLen(1))
		g.Expect(m.Attachments[0].AuthorName).To(Equal("canary/podinfo." + ns))
		g.Expect(m.Attachments[0].Color).To(BeElementOf("good", "danger"))
	}
	g.Expect(slack.requests()[0].path).To(Equal("/services/T0/B0/X"))

	g.Consistently(viaController.events, 2*time.Second, 200*time.Millisecond).WithArguments(t).Should(BeEmpty(),
		"direct mode sent events to notification-controller")
}

// notifyCanary creates the Deployment podinfo, applied by the
// Kustomization ks, and its blue/green Canary (two 1 s iterations, checking
// the error rate through Prometheus), waits until it is Initialized, and
// sends requests to the canary Service through the Gateway, as Flagger's
// load tester does in a blue/green analysis.
func notifyCanary(t testing.TB, g Gomega, ns string, ks *unstructured.Unstructured, mutate func(*v1alpha1.Canary)) *v1alpha1.Canary {
	ctx := context.Background()
	d := testobj.MakeDeployment("podinfo", ns).Replicas(1).Image("podinfo:v1").
		Label("kustomize.toolkit.fluxcd.io/name", ks.GetName()).
		Label("kustomize.toolkit.fluxcd.io/namespace", ks.GetNamespace()).Obj()
	g.Expect(k8s.Create(ctx, d)).To(Succeed())
	c := testobj.MakeCanary("podinfo", ns).ProgressDeadlineSeconds(30).Analysis(v1alpha1.CanaryAnalysis{
		Interval:   &metav1.Duration{Duration: time.Second},
		Threshold:  2,
		Iterations: 2,
		Metrics:    []v1alpha1.CanaryMetric{errorRateTemplate(t, ns)},
	}).Obj()
	if mutate != nil {
		mutate(c)
	}
	g.Expect(k8s.Create(ctx, c)).To(Succeed())
	waitForPhase(g, c, v1alpha1.PhaseInitialized, 30*time.Second)
	startCanaryTester(t, g, ns, "podinfo")
	return c
}

// notifyAlert creates a generic Provider posting to url and an Alert of
// the given severity on the Kustomizations of ns.
func notifyAlert(t testing.TB, g Gomega, c client.Client, ns, name, url, severity string) {
	t.Helper()
	ctx := context.Background()
	g.Expect(c.Create(ctx, &notificationv1beta3.Provider{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: notificationv1beta3.ProviderSpec{Type: "generic", Address: url}})).To(Succeed())
	g.Expect(c.Create(ctx, &notificationv1beta3.Alert{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: notificationv1beta3.AlertSpec{
			ProviderRef:   meta.LocalObjectReference{Name: name},
			EventSeverity: severity,
			EventSources:  []notificationv1.CrossNamespaceObjectReference{{Kind: "Kustomization", Name: "*"}},
		}})).To(Succeed())
}

// notifyKustomization creates a suspended Kustomization whose status says
// it applied revision, standing for the Flux object that applied the target.
func notifyKustomization(t testing.TB, g Gomega, ns, name, revision string) *unstructured.Unstructured {
	t.Helper()
	installKustomizationCRD(t)
	ks := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{
			"interval": "10m", "path": "./", "prune": true, "suspend": true,
			"sourceRef": map[string]any{"kind": "GitRepository", "name": name},
		},
	}}
	g.Expect(k8s.Create(context.Background(), ks)).To(Succeed())
	setLastAppliedRevision(g, ks, revision)
	return ks
}

// setLastAppliedRevision plays kustomize-controller having applied a commit
// that holds the Deployment podinfo: its inventory lists it, which is what
// serin checks before it speaks for the Kustomization.
func setLastAppliedRevision(g Gomega, ks *unstructured.Unstructured, revision string) {
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(context.Background(), client.ObjectKeyFromObject(ks), ks)).To(Succeed())
		g.Expect(unstructured.SetNestedField(ks.Object, revision, "status", "lastAppliedRevision")).To(Succeed())
		g.Expect(unstructured.SetNestedSlice(ks.Object, []any{map[string]any{"id": ks.GetNamespace() + "_podinfo_apps_Deployment", "v": "v1"}},
			"status", "inventory", "entries")).To(Succeed())
		g.Expect(k8s.Status().Update(context.Background(), ks)).To(Succeed())
	}, 10*time.Second, 100*time.Millisecond).Should(Succeed())
}

// kustomizationCRD installs the Kustomization CRD once for the package,
// whichever test asks first; err is what the others fail with too.
var kustomizationCRD struct {
	once sync.Once
	err  error
}

// installKustomizationCRD installs kustomize-controller's Kustomization CRD
// unless the testbed already serves it.
func installKustomizationCRD(t testing.TB) {
	t.Helper()
	kustomizationCRD.once.Do(func() { kustomizationCRD.err = installKustomizationCRDNow() })
	if kustomizationCRD.err != nil {
		t.Fatal(kustomizationCRD.err)
	}
}

// installKustomizationCRDNow installs the Kustomization CRD of
// kustomizeControllerVersion unless the testbed serves one.
func installKustomizationCRDNow() error {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	scheme := runtime.NewScheme()
	_ = apiextensionsv1.AddToScheme(scheme)
	c, err := client.New(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	err = c.Get(context.Background(), types.NamespacedName{Name: "kustomizations.kustomize.toolkit.fluxcd.io"}, crd)
	if err == nil {
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return err
	}
	out, err := exec.Command("go", "mod", "download", "-json", "github.com/fluxcd/kustomize-controller@"+kustomizeControllerVersion).Output()
	if err != nil {
		return fmt.Errorf("download kustomize-controller %s: %w", kustomizeControllerVersion, err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil {
		return err
	}
	if _, err := envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{
		Paths: []string{filepath.Join(mod.Dir, "config", "crd", "bases")}, ErrorIfPathMissing: true,
	}); err != nil {
		return fmt.Errorf("install the Kustomization CRD: %w", err)
	}
	return nil
}

// notifyClient is an admin client that also knows notification-controller's types.
func notifyClient(t testing.TB) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = notificationv1beta3.AddToScheme(scheme)
	c, err := client.New(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// rolloutEvents keeps the events about one revision.
func rolloutEvents(evs []eventv1.Event, revision string) []eventv1.Event {
	var out []eventv1.Event
	for _, ev := range evs {
		if ev.Metadata["revision"] == revision {
			out = append(out, ev)
		}
	}
	return out
}

// logEvents lists events one a line, for -v runs and failures.
func logEvents(t testing.TB, receiver string, evs []eventv1.Event) {
	t.Helper()
	var b strings.Builder
	for _, ev := range evs {
		fmt.Fprintf(&b, "\n  %s %s/%s %-6s %-18s phase=%s weight=%s revision=%s commit_status=%s: %s", ev.Timestamp.Format(time.TimeOnly),
			ev.InvolvedObject.Kind, ev.InvolvedObject.Name, ev.Severity, ev.Reason,
			ev.Metadata["phase"], ev.Metadata["weight"], ev.Metadata["revision"], ev.Metadata["commit_status"], ev.Message)
	}
	t.Logf("%s received %d events:%s", receiver, len(evs), b.String())
}

// eventSink stands for a chat service or webhook receiver: it records what
// notification-controller or the agent posts to it.
type eventSink struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []sinkRequest
}

type sinkRequest struct {
	path   string
	header http.Header
	body   []byte
	// at is when the request arrived.
	at time.Time
}

func newEventSink(t testing.TB) *eventSink {
	t.Helper()
	s := &eventSink{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		at := time.Now()
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.reqs = append(s.reqs, sinkRequest{path: r.URL.Path, header: r.Header.Clone(), body: body, at: at})
		s.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *eventSink) requests() []sinkRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sinkRequest(nil), s.reqs...)
}

// events decodes the Flux events a generic Provider received.
func (s *eventSink) events(t testing.TB) []eventv1.Event {
	var evs []eventv1.Event
	for _, r := range s.requests() {
		var ev eventv1.Event
		if err := json.Unmarshal(r.body, &ev); err != nil {
			t.Errorf("sink received a body that is no Flux event: %v\n%s", err, r.body)
			continue
		}
		evs = append(evs, ev)
	}
	return evs
}

// slackMessage is what Slack's incoming webhooks accept.
type slackMessage struct {
	Channel     string `json:"channel"`
	Username    string `json:"username"`
	Attachments []struct {
		Color      string       `json:"color"`
		AuthorName string       `json:"author_name"`
		Text       string       `json:"text"`
		MrkdwnIn   []string     `json:"mrkdwn_in"`
		Fields     []slackField `json:"fields"`
	} `json:"attachments"`
}

type slackField struct {
	Title string `json:"title"`
	Value string `json:"value"`
	Short bool   `json:"short"`
}

func (s *eventSink) slackMessages(t *testing.T) []slackMessage {
	var ms []slackMessage
	for _, r := range s.requests() {
		var m slackMessage
		if err := json.Unmarshal(r.body, &m); err != nil {
			t.Errorf("slack sink received a body that is no Slack message: %v\n%s", err, r.body)
			continue
		}
		ms = append(ms, m)
	}
	return ms
}
