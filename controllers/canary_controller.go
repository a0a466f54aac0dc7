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
	"errors"
	"fmt"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	helper "github.com/fluxcd/pkg/runtime/controller"
	"github.com/fluxcd/pkg/runtime/patch"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	kuberecorder "k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/analysis"
	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/gitops"
	"github.com/serin-dev/serin/internal/record"
	"github.com/serin-dev/serin/internal/rollout"
	"github.com/serin-dev/serin/internal/tenancy"
	"github.com/serin-dev/serin/notifier"
	"github.com/serin-dev/serin/routing"
)

// ControllerName is the name serin reports events and field ownership with.
const ControllerName = "serin"

// CanaryReconciler reconciles a Canary object.
type CanaryReconciler struct {
	client.Client
	kuberecorder.EventRecorder
	helper.Metrics

	// ControllerName is the field owner of serin's writes.
	ControllerName string

	// Clock returns the current time; nil means time.Now.
	Clock func() time.Time

	// Webhooks calls the Canaries' webhooks.
	Webhooks *analysis.Webhooks
	// Checks runs the Canaries' metric checks.
	Checks *analysis.Metrics
	// Analysis runs the steps' webhooks and metric checks off the
	// reconcile workers (analysis_runs.go); nil means a runner with the
	// defaults over Webhooks and Checks.
	Analysis *analysis.Runner
	// APIReader reads what the cache does not hold (the Flux objects that
	// applied a target), uncached; only when a new revision appears.
	APIReader client.Reader
	// Notifier sends events out through Flux; nil sends Kubernetes Events only.
	Notifier notifier.Notifier
	// Reverter reverts bad revisions in Git; nil disables GitOps revert.
	Reverter gitops.Reverter
	// Promoter writes promoted revisions to the next stages of their
	// waves and reads those stages' verdicts; nil disables waves.
	Promoter gitops.Promoter
	// ClusterName is the agent's --cluster-name: a wave stage whose
	// Canary is this Canary under this cluster's commit status context
	// stalls (rollout.InvalidPromotion).
	ClusterName string
	// Tenancy refuses cross-namespace references and gives the clients
	// that act as a Canary's service account; nil allows every reference
	// and acts as the agent.
	Tenancy *tenancy.Tenancy
	// WatchLabel is the label (workload.WatchLabel) that the manager's
	// caches of the kinds of WatchedObjects select on; serin puts it on
	// what it writes and on the targets, autoscalers and configs its
	// Canaries name (cache_scope.go). Empty when the caches hold everything.
	WatchLabel string
	// DataPlaneSettle is how long after a change of the primary's endpoints
	// a promotion waits before it moves on (--data-plane-settle-time): the
	// time the data plane takes to stop sending requests to the pods that
	// left them.
	DataPlaneSettle time.Duration
	// Shard is the agent's --watch-label-selector: the Canaries its cache
	// holds. nil (or empty) when it holds every Canary; when set, members
	// of groups and claims the cache misses are read live (shard.go).
	Shard labels.Selector
	// Router, when set, routes every Canary whatever its provider (tests
	// give a routing.Memory); nil picks the router of each Canary's
	// spec.routing.provider.
	Router routing.Router

	metrics    *canaryMetrics
	reverts    *revertJobs
	promotions *gitJobs[promotionOutcome]
	// commitStatuses deliver the verdicts' commit statuses.
	commitStatuses *commitStatusJobs
	expectations   *writeExpectations
	routeClocks    *routeClocks
	endpointClocks *endpointClocks
	configs        *configHashes
}

// CanaryReconcilerOptions tunes the controller.
type CanaryReconcilerOptions struct {
	// MaxConcurrentReconciles is the number of Canaries reconciled at once.
	MaxConcurrentReconciles int
	// RateLimiter is the backoff of failed reconciles.
	RateLimiter helper.RateLimiterOptions
}

// Reconcile follows Flux's reconcile shape: get, patcher, deferred status
// patch, deletion, finalizer, suspend, then observe → decide → act.
func (r *CanaryReconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, retErr error) {
	start := time.Now()
	log := ctrl.LoggerFrom(ctx)

	obj := &v1alpha1.Canary{}
	if err := r.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			r.expectations.forget(req.NamespacedName)
			r.routeClocks.forget(req.NamespacedName)
			r.endpointClocks.forget(req.NamespacedName)
			r.Analysis.Forget(req.NamespacedName)
			r.reverts.forget(req.NamespacedName)
			r.promotions.forget(req.NamespacedName)
			r.commitStatuses.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if r.expectations.stale(req.NamespacedName, &obj.Status, r.now()) {
		log.V(1).Info("cache older than the last status written; waiting for it")
		return ctrl.Result{RequeueAfter: 50 * time.Millisecond}, nil
	}
	patcher := patch.NewSerialPatcher(obj, r.Client)
	// The status as read: what a status write replaces (see
	// writeExpectations), and how the reconciles that write it are counted.
	read := obj.Status.DeepCopy()
	var action rollout.Action
	if v, ok := meta.ReconcileAnnotationValue(obj.GetAnnotations()); ok {
		obj.Status.SetLastHandledReconcileRequest(v)
	}
	phaseBefore := obj.Status.Phase

	begun := r.now()
	defer func() {
		defer r.Metrics.RecordDuration(ctx, obj, start)
		if obj.DeletionTimestamp.IsZero() && apierrors.HasStatusCause(retErr, corev1.NamespaceTerminatingCause) {
			// The namespace is being deleted: the API server refuses
			// every new object, and what serin would re-create goes with
			// the namespace. Nothing to write or to retry (a retry would
			// back off and hold the Canary's own deletion, which comes
			// next as an event). A Canary already being deleted keeps
			// its retries: its finalizer must go.
			log.V(1).Info("namespace terminating: nothing generated is re-created", "error", retErr.Error())
			result, retErr = ctrl.Result{}, nil
			return
		}
		result, retErr = r.finalizeStatus(ctx, obj, patcher, read, phaseBefore, result, retErr)
		if !apiequality.Semantic.DeepEqual(read, &obj.Status) {
			r.metrics.wroteStatus(action, retErr != nil)
		}
		result.RequeueAfter = fromReturn(result.RequeueAfter, r.now().Sub(begun))
	}()

	ctx, err := r.actAs(ctx, obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	defer func() { retErr = r.accessDenied(obj, retErr) }()

	if !obj.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, obj)
	}

	// Add the finalizer first, so that cleanup runs before the Canary goes
	// (replacing its legacy name).
	if ensureFinalizer(obj) {
		return ctrl.Result{RequeueAfter: time.Millisecond}, nil
	}

	if obj.Spec.Suspend {
		log.V(1).Info("reconciliation is suspended for this canary")
		return ctrl.Result{}, nil
	}

	// A verdict's commit status goes out whatever the rollout does next.
	statusWait := r.deliverCommitStatus(ctx, obj)
	obs, err := r.observe(ctx, obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	if obs.Target.Found {
		obj.Status.TrackedConfigs = obs.Target.TrackedConfigs
	}
	obs.RefusedRefs = r.refusedRefs(obj)
	r.answerPromoteTo(ctx, obj, &obs)
	action = rollout.Decide(obj, obs)
	log.V(1).Info("decided", "phase", obj.Status.Phase, "action", action.String())
	before := obj.Status.DeepCopy()
	result, err = r.act(ctx, obj, obs, action)
	if err != nil {
		keepProgressOf(obj, before)
		return result, err
	}
	if statusWait > 0 && (result.RequeueAfter == 0 || statusWait < result.RequeueAfter) {
		result.RequeueAfter = statusWait
	}
	return result, readyOnlyIfServed(obj, obs)
}

// readyOnlyIfServed keeps Ready from saying True, whatever the action,
// while the routes send users to a primary with no pod ready to serve:
// Ready reports what users get, not the last thing serin did. The primary's
// status changes reconcile again.
func readyOnlyIfServed(obj *v1alpha1.Canary, obs rollout.Observation) error {
	phase := obj.Status.Phase
	if phase != v1alpha1.PhaseInitialized && phase != v1alpha1.PhaseSucceeded {
		return nil
	}
	p := obs.Primary
	if !p.Exists || !obs.PrimaryRouted() || p.Health.Serving > 0 || (p.Health.Ready && !p.ScaledDown) {
		return nil
	}
	return &waitingError{Reason: v1alpha1.PrimaryUnavailableReason, RequeueAfter: time.Minute,
		Err: fmt.Errorf("the primary has no pod ready to serve: %s", p.Health.Message)}
}

// keepProgressOf undoes what a failed action recorded in the status: a
// field that records progress (the applied spec, the phase, the weight, a
// handled request) is written only once every write it stands for
// succeeded, so the next reconcile sees the same work still to do and
// finishes it. What was written before the failure stays in the cluster,
// where the next observation finds it. The conditions say why it failed.
func keepProgressOf(obj *v1alpha1.Canary, before *v1alpha1.CanaryStatus) {
	conds := obj.Status.Conditions
	obj.Status = *before
	obj.Status.Conditions = conds
}

// act carries out the action Decide chose.
func (r *CanaryReconciler) act(ctx context.Context, obj *v1alpha1.Canary, obs rollout.Observation, action rollout.Action) (ctrl.Result, error) {
	switch a := action.(type) {
	case rollout.Stall:
		return ctrl.Result{}, &stallingError{Reason: a.Reason, Err: errors.New(a.Message), RetryAfter: r.missingObjectRetry(a.Reason)}
	case rollout.Initialize:
		return r.initialize(ctx, obj, obs)
	case rollout.WaitForPrimary:
		return r.waitForPrimary(ctx, obj, a)
	case rollout.CompleteInitialization:
		return r.completeInitialization(ctx, obj, obs)
	case rollout.SyncServices:
		return r.syncGeneratedServices(ctx, obj, obs)
	case rollout.ScaleDownCanary:
		return r.scaleDownCanary(ctx, obj)
	case rollout.AcceptRevision:
		return r.acceptRevision(ctx, obj, obs)
	case rollout.StartRollout:
		return r.startRollout(ctx, obj, obs, a)
	case rollout.RestartAnalysis:
		return r.restartAnalysis(ctx, obj, obs)
	case rollout.WaitForCanary:
		return r.waitForCanary(obj, obs, a)
	case rollout.Wait:
		return ctrl.Result{RequeueAfter: a.RequeueAfter}, nil
	case rollout.WaitForRoutes:
		return r.waitForRoutes(ctx, obj, obs, a)
	case rollout.RoutesProgrammed:
		return r.routesProgrammed(ctx, obj, obs)
	case rollout.Step:
		return r.step(ctx, obj, obs)
	case rollout.Promote:
		return r.promote(ctx, obj, obs, a)
	case rollout.WaitForPromotion:
		return r.waitForPromotion(obj, a)
	case rollout.Finalise:
		return r.finalise(ctx, obj, obs)
	case rollout.CompletePromotion:
		return r.completePromotion(ctx, obj, obs)
	case rollout.Rollback:
		return r.rollback(ctx, obj, obs, a)
	case rollout.Halt:
		return r.halt(ctx, obj, obs, a)
	case rollout.Shield:
		return r.shield(ctx, obj, a)
	case rollout.RestorePrimary:
		return r.restorePrimary(ctx, obj, obs)
	case rollout.CompleteRestore:
		return r.completeRestore(ctx, obj, obs, a)
	case rollout.OpenRevert:
		return r.openRevert(ctx, obj, obs)
	case rollout.RepairPrimary:
		return r.repairPrimary(ctx, obj, obs)
	case rollout.ScalePrimary:
		return r.scalePrimary(ctx, obj)
	case rollout.PrimaryUnavailable:
		return r.primaryUnavailable(a)
	case rollout.RecordWeights:
		return r.recordWeights(obj, obs)
	case rollout.WaitForGroup:
		return r.waitForGroup(obj, a)
	case rollout.GroupAdvance:
		return r.groupAdvance(ctx, obj, obs)
	case rollout.JoinRelease:
		return joinEarlierRelease(obj, a)
	case rollout.SupersedeRelease:
		return r.supersedeRelease(ctx, obj, obs, a)
	case rollout.HoldPromotion:
		return r.holdPromotion(ctx, obj, obs, a)
	case rollout.AdvanceWave:
		return r.advanceWave(ctx, obj, obs, a)
	case rollout.SyncBaseline:
		return r.syncBaseline(ctx, obj, obs)
	case rollout.RouteBaseline:
		return r.routeBaseline(ctx, obj, obs, a)
	case rollout.WaitForBaseline:
		return r.waitForBaseline(obj, obs, a)
	case rollout.RemoveBaseline:
		return r.removeBaseline(ctx, obj)
	case rollout.Idle:
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, fmt.Errorf("no handler for action %s", action)
}

// finalizeStatus derives the conditions from the phase and the reconcile
// error, records the phase change as an event, and patches the status once;
// status.observedGeneration only when the reconcile settled (settled).
func (r *CanaryReconciler) finalizeStatus(ctx context.Context, obj *v1alpha1.Canary, patcher *patch.SerialPatcher,
	read *v1alpha1.CanaryStatus, before v1alpha1.CanaryPhase, result ctrl.Result, retErr error) (ctrl.Result, error) {
	result, retErr = setConditions(obj, result, retErr)
	keepKstatusInvariants(obj)
	if before != obj.Status.Phase {
		r.recordPhase(ctx, obj)
	}
	r.metrics.setPhase(obj)
	r.metrics.setWeight(obj)
	if !obj.DeletionTimestamp.IsZero() && !holdsFinalizer(obj) {
		// Only the finalizer removal is left to write; the status goes with the object.
		// Gone once its last finalizer is: the status patch that follows
		// finds nothing. The patcher aggregates its errors, which
		// apierrors.IsNotFound does not see through.
		if err := kerrors.FilterOut(patcher.Patch(ctx, obj, patch.WithFieldOwner(r.ControllerName)), apierrors.IsNotFound); err != nil {
			retErr = errors.Join(retErr, err)
		}
		return result, retErr
	}
	opts := []patch.Option{
		patch.WithOwnedConditions{Conditions: ownedConditions},
		patch.WithFieldOwner(r.ControllerName),
	}
	if settled(obj, retErr) {
		opts = append(opts, patch.WithStatusObservedGeneration{})
	}
	if err := patcher.Patch(ctx, obj, opts...); err != nil {
		if !obj.DeletionTimestamp.IsZero() {
			err = kerrors.FilterOut(err, apierrors.IsNotFound)
		}
		retErr = errors.Join(retErr, err)
	} else {
		r.expectations.wrote(client.ObjectKeyFromObject(obj), read, &obj.Status, r.now())
	}
	r.Metrics.RecordReadiness(ctx, obj)
	r.Metrics.RecordStalled(ctx, obj)
	r.Metrics.RecordReconciling(ctx, obj)
	return result, retErr
}

// fromReturn turns a delay the actions count from the start of the
// reconcile (a step is due one interval after the last transition, which is
// obs.Now) into the delay the work queue counts from the return, after the
// status patch: without it every step ran late by the time its predecessor's
// reconcile took. A requeue stays a requeue.
func fromReturn(after, elapsed time.Duration) time.Duration {
	if after <= 0 {
		return after
	}
	return max(after-elapsed, time.Millisecond)
}

// recordPhase emits an event for a phase change, with the revision.
func (r *CanaryReconciler) recordPhase(ctx context.Context, obj *v1alpha1.Canary) {
	severity := notifier.SeverityInfo
	switch {
	case obj.Status.Phase == v1alpha1.PhaseFailed || obj.Status.Phase == v1alpha1.PhaseHalted:
		severity = notifier.SeverityError
	case conditions.IsStalled(obj) || obj.Status.Phase == v1alpha1.PhaseWaiting || obj.Status.Phase == v1alpha1.PhaseWaitingPromotion:
		severity = notifier.SeverityWarn
	}
	msg := conditions.GetMessage(obj, meta.ReadyCondition)
	if rev := obj.Status.LastAttemptedRevision; rev != "" {
		msg = fmt.Sprintf("%s (revision %s)", msg, rev)
	}
	phase := obj.Status.Phase
	final := phase == v1alpha1.PhaseSucceeded || phase == v1alpha1.PhaseFailed || phase == v1alpha1.PhaseHalted
	if phase == v1alpha1.PhaseFailed || phase == v1alpha1.PhaseHalted {
		// The values that decided it, which outlive no event.
		if s := record.Summary(record.Latest(&obj.Status)); s != "" {
			msg += "; analysis " + s
		}
	}
	r.send(ctx, obj, severity, string(phase), final, msg)
	r.oweCommitStatus(obj, notifier.Event{Severity: severity, Reason: string(phase), Message: msg, Phase: phase, Revision: obj.Status.LastAttemptedRevision})
}
