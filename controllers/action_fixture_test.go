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

package controllers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serin-dev/serin/analysis"
	"github.com/serin-dev/serin/api/v1alpha1"
	analysisrecord "github.com/serin-dev/serin/internal/record"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/internal/testing/testobj"
	"github.com/serin-dev/serin/internal/testing/testutil"
	"github.com/serin-dev/serin/internal/workload"
	"github.com/serin-dev/serin/notifier"
	"github.com/serin-dev/serin/routing"
)

// The tests of the actions (action_*_test.go) call one action of the
// reconciler directly, as source-controller's tests call one
// sub-reconciler, and check what it left behind: the writes to the
// cluster, the weights it routed, the Canary's status and conditions, the
// events, and the result or error that decides the requeue.

// actionNow is the fixed time of the reconciler's clock and of the
// observations.
var actionNow = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

// actionStepTimeout bounds the analysis steps of the action tests.
const actionStepTimeout = 5 * time.Second

// actionFixture is the world of one action test: a CanaryReconciler over a
// fake client holding the objects, the in-memory router, a fake event
// recorder and a fixed clock.
type actionFixture struct {
	t        *testing.T
	r        *CanaryReconciler
	store    client.Client // the objects, read back without the write log
	router   *routing.Memory
	recorder *record.FakeRecorder
	notifier *recordingNotifier
	// calls logs the reconciler's writes ("verb Kind/name", in order, the
	// failed ones included) and fails the calls a test names.
	calls *testutil.Calls
	// recorded are the events verify read, for the checks of messages.
	recorded []recordedEvent
	// outcomes receives the Canaries whose analysis work is done.
	outcomes chan types.NamespacedName
	// checks runs the metric checks of the analysis runner; without a
	// MetricsServer, the built-in checks fail.
	checks *analysis.Metrics
}

// injectedFault is the error of a call a test made fail.
var injectedFault = apierrors.NewServiceUnavailable("injected fault")

// newActionReconciler returns the world of an action test holding objs.
func newActionReconciler(t *testing.T, objs ...client.Object) *actionFixture {
	t.Helper()
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = v1alpha1.AddToScheme(s)
	_ = gatewayv1.Install(s)
	store := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).
		WithStatusSubresource(&v1alpha1.Canary{}, &appsv1.Deployment{}, &gatewayv1.HTTPRoute{}).
		WithIndex(&v1alpha1.Canary{}, claimsIndexKey, claimKeys).
		WithIndex(&v1alpha1.CanaryGroup{}, groupMembersIndexKey, groupMembers).
		Build()
	f := &actionFixture{
		t:        t,
		store:    store,
		router:   &routing.Memory{},
		recorder: record.NewFakeRecorder(100),
		calls:    &testutil.Calls{Fail: map[string]error{}},
		outcomes: make(chan types.NamespacedName, 10),
		checks:   &analysis.Metrics{},
	}
	c := f.calls.Wrap(store)
	runner := analysis.NewRunner(&analysis.Webhooks{}, f.checks, analysis.RunnerOptions{StepTimeout: actionStepTimeout})
	runner.OnDone(func(key types.NamespacedName) { f.outcomes <- key })
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	go func() { _ = runner.Start(ctx) }()
	f.notifier = &recordingNotifier{}
	f.r = &CanaryReconciler{
		Client:         c,
		Notifier:       f.notifier,
		EventRecorder:  f.recorder,
		ControllerName: ControllerName,
		Clock:          func() time.Time { return actionNow },
		Router:         f.router,
		Analysis:       runner,
	}
	f.r.setDefaults(c, c)
	return f
}

// get reads an object of the world back; false when it does not exist.
func (f *actionFixture) get(name string, o client.Object) bool {
	f.t.Helper()
	err := f.store.Get(context.Background(), types.NamespacedName{Namespace: "apps", Name: name}, o)
	if apierrors.IsNotFound(err) {
		return false
	}
	if err != nil {
		f.t.Fatal(err)
	}
	return true
}

// replicas returns a Deployment's spec.replicas (-1 when unset).
func (f *actionFixture) replicas(name string) int32 {
	f.t.Helper()
	d := &appsv1.Deployment{}
	if !f.get(name, d) {
		f.t.Fatalf("deployment %s not found", name)
	}
	if d.Spec.Replicas == nil {
		return -1
	}
	return *d.Spec.Replicas
}

// recordedEvent is one Kubernetes Event the reconciler recorded.
type recordedEvent struct{ Type, Reason, Message string }

// events drains the events recorded so far.
func (f *actionFixture) events() []recordedEvent {
	var out []recordedEvent
	for {
		select {
		case e := <-f.recorder.Events:
			parts := strings.SplitN(e, " ", 3)
			for len(parts) < 3 {
				parts = append(parts, "")
			}
			out = append(out, recordedEvent{Type: parts[0], Reason: parts[1], Message: parts[2]})
		default:
			return out
		}
	}
}

// awaitEvent waits for an event recorded off the reconcile (a post-rollout
// hook's failure).
func (f *actionFixture) awaitEvent() recordedEvent {
	f.t.Helper()
	select {
	case e := <-f.recorder.Events:
		parts := strings.SplitN(e, " ", 3)
		return recordedEvent{Type: parts[0], Reason: parts[1], Message: parts[2]}
	case <-time.After(10 * time.Second):
		f.t.Fatal("no event")
		return recordedEvent{}
	}
}

// awaitAnalysis waits for the analysis work of a Canary to have its outcome.
func (f *actionFixture) awaitAnalysis() {
	f.t.Helper()
	select {
	case <-f.outcomes:
	case <-time.After(2 * actionStepTimeout):
		f.t.Fatal("the analysis never had an outcome")
	}
}

// hookServer is a webhook receiver answering every call with status, once
// gate is closed (nil: at once); it passes on the payloads it received.
func hookServer(t *testing.T, status int, gate <-chan struct{}) (url string, calls <-chan analysis.Payload) {
	t.Helper()
	received := make(chan analysis.Payload, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p analysis.Payload
		if err := json.NewDecoder(r.Body).Decode(&p); err != nil {
			t.Errorf("webhook payload: %v", err)
		}
		received <- p
		if gate != nil {
			select {
			case <-gate:
			case <-r.Context().Done():
			}
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, received
}

// awaitCall waits for a webhook call.
func awaitCall(t *testing.T, calls <-chan analysis.Payload) analysis.Payload {
	t.Helper()
	select {
	case p := <-calls:
		return p
	case <-time.After(10 * time.Second):
		t.Fatal("the webhook was not called")
		return analysis.Payload{}
	}
}

// endedRollouts reads serin_canary_total of podinfo: the rollouts that
// ended, by result.
func endedRollouts(t *testing.T) map[string]float64 {
	t.Helper()
	newCanaryMetrics()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	ended := map[string]float64{}
	for _, family := range families {
		if family.GetName() != "serin_canary_total" {
			continue
		}
		for _, m := range family.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["name"] == "podinfo" && labels["namespace"] == "apps" {
				ended[labels["result"]] = m.GetCounter().GetValue()
			}
		}
	}
	return ended
}

// actionCase is one row of an action's table.
type actionCase struct {
	canary *v1alpha1.Canary
	// objs are the objects in the cluster; the Canary is not among them:
	// an action changes it in memory, the reconcile writes its status.
	objs []client.Object
	// routes are the weights the routing objects carry; nil: there are none.
	routes *routing.Weights
	// routerDown makes every call of the router fail.
	routerDown bool
	// fail are the calls that fail ("patch Deployment/podinfo").
	fail []string
	// setup gives the reconciler what the case needs (a Reverter, a
	// metrics server).
	setup func(f *actionFixture)
	// obs is what the reconcile observed; Now defaults to actionNow.
	obs rollout.Observation
	// action is the action decide chose, for the actions that take one.
	action rollout.Action
	// analysed: the action asks the analysis runner for a step or gate
	// with calls to make; the first call only queues them, and leaves
	// everything as it was.
	analysed bool
	want     actionWant
	// check makes the assertions particular to the case.
	check func(t *testing.T, f *actionFixture, obj *v1alpha1.Canary)
}

// actionWant is what an action leaves behind.
type actionWant struct {
	result ctrl.Result
	// err checks the error; nil: none.
	err func(t *testing.T, err error)
	// status makes the changes the action makes to the status (conditions
	// aside); nil: none.
	status func(st *v1alpha1.CanaryStatus)
	// conditions are the Canary's conditions, type, status and reason.
	conditions []metav1.Condition
	writes     []string
	// weights are the weights written to the routes, in order.
	weights []routing.Weights
	// events are the events recorded, "Type Reason".
	events []string
	// ended is the result the rollout ended with in the metrics, "" when
	// it did not end.
	ended string
	// notified are the reasons of the events sent to the notifier, in
	// order; nil: not checked.
	notified []string
	// records are the analysis records (status.analyses) the action
	// leaves, as describeRecords writes them; nil: unchanged.
	records []string
}

// describeRecords writes analysis records a line each, newest first:
// "spec result (message): weight verdict [check value (range) verdict,
// webhook (type) verdict] | …"; the messages of steps, checks and webhooks
// are left out (they name test servers' ports).
func describeRecords(recs []v1alpha1.AnalysisRecord) []string {
	var out []string
	for _, rec := range recs {
		line := rec.Spec
		if rec.Result != "" {
			line += fmt.Sprintf(" %s (%s)", rec.Result, rec.Message)
		}
		var steps []string
		for _, s := range rec.Steps {
			var parts []string
			for _, c := range s.Checks {
				parts = append(parts, fmt.Sprintf("%s %q (%s) %s", c.Name, c.Value, analysisrecord.Range(c), c.Verdict))
			}
			for _, h := range s.Webhooks {
				parts = append(parts, fmt.Sprintf("%s (%s) %s", h.Name, h.Type, h.Verdict))
			}
			step := fmt.Sprintf("%d %s", s.Weight, s.Verdict)
			if len(parts) > 0 {
				step += " [" + strings.Join(parts, ", ") + "]"
			}
			steps = append(steps, step)
		}
		if len(steps) > 0 {
			line += ": " + strings.Join(steps, " | ")
		}
		out = append(out, line)
	}
	return out
}

// actionFunc calls one action.
type actionFunc func(ctx context.Context, r *CanaryReconciler, obj *v1alpha1.Canary, obs rollout.Observation, a rollout.Action) (ctrl.Result, error)

// runActionCases runs an action's table.
func runActionCases(t *testing.T, cases map[string]actionCase, act actionFunc) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newActionReconciler(t, tc.objs...)
			for _, call := range tc.fail {
				f.calls.Fail[call] = injectedFault
			}
			obj := tc.canary
			if tc.routes != nil {
				f.router.SetWeights(obj.Namespace, obj.GetServiceName(), *tc.routes)
			}
			if tc.routerDown {
				f.router.Err = errors.New("routes unreachable")
			}
			if tc.setup != nil {
				tc.setup(f)
			}
			obs := tc.obs
			if obs.Now.IsZero() {
				obs.Now = actionNow
			}
			before := obj.Status.DeepCopy()
			ended := endedRollouts(t)
			ctx := ctrl.LoggerInto(context.Background(), ctrl.Log)
			res, err := act(ctx, f.r, obj, obs, tc.action)
			if tc.analysed {
				pending := actionWant{result: ctrl.Result{RequeueAfter: actionStepTimeout + time.Second}, conditions: before.Conditions}
				f.verify(obj, before, res, err, pending)
				f.awaitAnalysis()
				res, err = act(ctx, f.r, obj, obs, tc.action)
			}
			f.verify(obj, before, res, err, tc.want)
			if tc.want.ended != "" {
				ended[tc.want.ended]++
			}
			if diff := cmp.Diff(ended, endedRollouts(t)); diff != "" {
				t.Errorf("rollouts ended (-want +got):\n%s", diff)
			}
			if tc.check != nil {
				tc.check(t, f, obj)
			}
		})
	}
}

// verify compares what the action left behind with want; before is the
// Canary's status before it ran.
func (f *actionFixture) verify(obj *v1alpha1.Canary, before *v1alpha1.CanaryStatus, res ctrl.Result, err error, want actionWant) {
	t := f.t
	t.Helper()
	if want.err == nil && err != nil {
		t.Errorf("error: %v", err)
	} else if want.err != nil {
		want.err(t, err)
	}
	if diff := cmp.Diff(want.result, res); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	wantStatus := before.DeepCopy()
	if want.status != nil {
		want.status(wantStatus)
	}
	if diff := cmp.Diff(*wantStatus, obj.Status, cmpopts.IgnoreFields(v1alpha1.CanaryStatus{}, "Conditions", "Analyses"), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	wantRecords := want.records
	if wantRecords == nil {
		wantRecords = describeRecords(before.Analyses)
	}
	if diff := cmp.Diff(wantRecords, describeRecords(obj.Status.Analyses), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("analysis records (-want +got):\n%s\ngot: %#v", diff, describeRecords(obj.Status.Analyses))
	}
	ignore := cmpopts.IgnoreFields(metav1.Condition{}, "Message", "LastTransitionTime", "ObservedGeneration")
	if diff := cmp.Diff(want.conditions, obj.Status.Conditions, ignore, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want.writes, f.calls.Writes, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want.weights, f.router.Writes(obj.Namespace, obj.GetServiceName()), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("weights written (-want +got):\n%s", diff)
	}
	var events []string
	for _, e := range f.events() {
		f.recorded = append(f.recorded, e)
		events = append(events, e.Type+" "+e.Reason)
	}
	if diff := cmp.Diff(want.events, events, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if want.notified != nil {
		if diff := cmp.Diff(want.notified, f.notifier.reasons()); diff != "" {
			t.Errorf("notified (-want +got):\n%s", diff)
		}
	}
	// Only a step that moved the rollout on is progress, the first to
	// give way in a full delivery queue; phase changes and failures never.
	f.notifier.mu.Lock()
	defer f.notifier.mu.Unlock()
	for _, e := range f.notifier.events {
		if progress := e.Reason == v1alpha1.WeightIncreasedReason || e.Reason == v1alpha1.IterationReason; e.Progress != progress {
			t.Errorf("notified %s with Progress=%v, want %v", e.Reason, e.Progress, progress)
		}
	}
}

// readySays checks the Ready condition's message.
func readySays(want string) func(t *testing.T, _ *actionFixture, obj *v1alpha1.Canary) {
	return func(t *testing.T, _ *actionFixture, obj *v1alpha1.Canary) {
		t.Helper()
		if got := apimeta.FindStatusCondition(obj.Status.Conditions, meta.ReadyCondition); got == nil || got.Message != want {
			t.Errorf("Ready %v, want the message %q", got, want)
		}
	}
}

// routedThenScaleFailed is what an action that routes all traffic to the
// primary and then scales the target down leaves when the scale fails:
// the traffic on the primary, the weight recorded, an error.
var routedThenScaleFailed = actionWant{
	err:     injected,
	status:  func(st *v1alpha1.CanaryStatus) { st.CanaryWeight = 0 },
	weights: []routing.Weights{routing.AllPrimary},
	writes:  []string{"patch Deployment/podinfo"},
}

// routesDown is what an action that writes the routes first leaves when
// the router cannot be reached: an error, and nothing else.
var routesDown = actionWant{err: errContaining("routes unreachable")}

// eventSays checks the message of the last event the action recorded.
func eventSays(want string) func(t *testing.T, f *actionFixture, _ *v1alpha1.Canary) {
	return func(t *testing.T, f *actionFixture, _ *v1alpha1.Canary) {
		t.Helper()
		if len(f.recorded) == 0 || f.recorded[len(f.recorded)-1].Message != want {
			t.Errorf("events %+v, want the last one saying %q", f.recorded, want)
		}
	}
}

// ready is the Ready condition with a status and reason.
func ready(status metav1.ConditionStatus, reason string) metav1.Condition {
	return metav1.Condition{Type: meta.ReadyCondition, Status: status, Reason: reason}
}

// at is a status time.
func at(t time.Time) *metav1.MicroTime {
	mt := metav1.NewMicroTime(t)
	return &mt
}

// errContaining wants an error whose message contains s.
func errContaining(s string) func(t *testing.T, err error) {
	return func(t *testing.T, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), s) {
			t.Errorf("error %v, want one containing %q", err, s)
		}
	}
}

// injected wants the injected fault, wrapped.
func injected(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, injectedFault) {
		t.Errorf("error %v, want the injected fault", err)
	}
}

// notFound wants a not-found error.
func notFound(t *testing.T, err error) {
	t.Helper()
	if !apierrors.IsNotFound(err) {
		t.Errorf("error %v, want not found", err)
	}
}

// stalls wants a stallingError with reason: a person must act.
func stalls(reason string) func(t *testing.T, err error) {
	return func(t *testing.T, err error) {
		t.Helper()
		var stalling *stallingError
		if !errors.As(err, &stalling) || stalling.Reason != reason {
			t.Errorf("error %v, want a stall (%s)", err, reason)
		}
	}
}

// waits wants a waitingError with reason, retried after a delay.
func waits(reason string, after time.Duration) func(t *testing.T, err error) {
	return func(t *testing.T, err error) {
		t.Helper()
		var waiting *waitingError
		if !errors.As(err, &waiting) || waiting.Reason != reason || waiting.RequeueAfter != after {
			t.Errorf("error %v, want a wait (%s) of %s", err, reason, after)
		}
	}
}

// refused wants the refusal to take over an object the Canary did not
// create (workload.NotManagedError).
func refused(kind, name string) func(t *testing.T, err error) {
	return func(t *testing.T, err error) {
		t.Helper()
		var foreign *workload.NotManagedError
		if !errors.As(err, &foreign) || foreign.Kind != kind || foreign.Name != name {
			t.Errorf("error %v, want the refusal of %s %s", err, kind, name)
		}
	}
}

// The world of most action tests: podinfo's Canary (UID uid-podinfo) in
// apps, its target Deployment with two replicas, and the primary serin
// generated from it.

// podinfoCanary is podinfo's blue/green Canary.
func podinfoCanary() *testobj.CanaryWrapper {
	return testobj.MakeCanary("podinfo", "apps").UID("uid-podinfo").
		Analysis(v1alpha1.CanaryAnalysis{Interval: &metav1.Duration{Duration: 10 * time.Second}, Threshold: 2, Iterations: 3})
}

// weightedPodinfo is podinfo's Canary on an HTTPRoute, 25% steps to 50%.
func weightedPodinfo() *testobj.CanaryWrapper {
	return testobj.MakeCanary("podinfo", "apps").UID("uid-podinfo").Gateway("gateways", "public").
		Analysis(v1alpha1.CanaryAnalysis{Interval: &metav1.Duration{Duration: 10 * time.Second}, Threshold: 2, StepWeight: 25, MaxWeight: 50})
}

// podinfoTarget is the target Deployment with replicas.
func podinfoTarget(replicas int32) *appsv1.Deployment {
	return testobj.MakeDeployment("podinfo", "apps").Replicas(replicas).Obj()
}

// primaryOf is the primary serin generated for c from target's revision
// spec, its controller c.
func primaryOf(c *v1alpha1.Canary, target *appsv1.Deployment, spec string) *appsv1.Deployment {
	p := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: c.GetPrimaryName()}}
	workload.MutatePrimary(c, target, p, true, nil)
	p.Annotations[specHashAnnotation] = spec
	if err := workload.Claim(c, p, canaryScheme()); err != nil {
		panic(err)
	}
	return p
}

// recordOf is the ControllerRevision in which serin recorded the primary
// of c at spec, and the hashes of its configs' data, when it promoted it
// (recordPromoted).
func recordOf(c *v1alpha1.Canary, primary *appsv1.Deployment, spec string, configs map[string]string) *appsv1.ControllerRevision {
	data, err := json.Marshal(promotedRevision{Template: primary.Spec.Template, Replicas: primary.Spec.Replicas, Configs: configs})
	if err != nil {
		panic(err)
	}
	cr := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: promotedRevisionName(c, spec),
			Labels: map[string]string{workload.CanaryNameLabel: c.Name}, Annotations: map[string]string{specHashAnnotation: spec}},
		Data:     runtime.RawExtension{Raw: data},
		Revision: 1,
	}
	if err := controllerutil.SetControllerReference(c, cr, canaryScheme()); err != nil {
		panic(err)
	}
	return cr
}

// canaryScheme knows the Canary, for the owner references of test objects.
func canaryScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = v1alpha1.AddToScheme(s)
	return s
}

// observed is a reconcile's observation of a target revision whose Flux
// revision is main@sha1:<spec>, with the canary at weight.
func observed(spec string, weight int) rollout.Observation {
	return rollout.Observation{
		Now:          actionNow,
		Target:       rollout.Target{Found: true, SpecHash: spec, Revision: "main@sha1:" + spec},
		CanaryWeight: weight,
	}
}

// weights returns a pointer to w, the weights in place.
func weights(w routing.Weights) *routing.Weights { return &w }

// recordingNotifier records the events sent to the notifier.
type recordingNotifier struct {
	mu     sync.Mutex
	events []notifier.Event
}

func (n *recordingNotifier) Notify(_ context.Context, _ *v1alpha1.Canary, e notifier.Event) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.events = append(n.events, e)
}

// reasons are the reasons of the events notified so far.
func (n *recordingNotifier) reasons() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := []string{}
	for _, e := range n.events {
		out = append(out, e.Reason)
	}
	return out
}

// messages are the messages of the events notified so far.
func (n *recordingNotifier) messages() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for _, e := range n.events {
		out = append(out, e.Message)
	}
	return out
}
