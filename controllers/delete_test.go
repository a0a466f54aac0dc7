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
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/workload"
)

// generatedService is a Service serin generated for c, its controller c.
func generatedService(c *v1alpha1.Canary, name string) *corev1.Service {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: name}}
	if err := workload.Claim(c, svc, canaryScheme()); err != nil {
		panic(err)
	}
	return svc
}

// Deleting a Canary without revertOnDeletion orphans what it generated.
// An object that went since the cache saw it (its namespace is being
// deleted: the namespace controller deletes the Deployments and the
// Canaries at once) or that is already being deleted has nothing left to
// keep: the finalizer goes on rather than failing into the retry backoff,
// which held thousands of Canaries of a deleted namespace for minutes.
func TestOrphanGenerated(t *testing.T) {
	gone := apierrors.NewNotFound(schema.GroupResource{Group: "apps", Resource: "deployments"}, "podinfo-primary")
	for name, tc := range map[string]struct {
		fail        error // the primary's patch
		deleting    bool  // the primary is already being deleted
		wantPatched bool
	}{
		"orphans the primary":                       {wantPatched: true},
		"the primary went since the cache saw it":   {fail: gone, wantPatched: true},
		"the primary is already being deleted":      {deleting: true},
		"another error holds the deletion to retry": {fail: injectedFault, wantPatched: true},
	} {
		t.Run(name, func(t *testing.T) {
			canary := podinfoCanary().Obj()
			canary.Status.Phase = v1alpha1.PhaseSucceeded
			target := podinfoTarget(1)
			primary := primaryOf(canary, target, "spec-1")
			if tc.deleting {
				now := metav1.Now()
				primary.DeletionTimestamp = &now
				primary.Finalizers = []string{"foregroundDeletion"}
			}
			f := newActionReconciler(t, canary, target, primary,
				generatedService(canary, canary.GetServiceName()), generatedService(canary, canary.GetPrimaryServiceName()))
			if tc.fail != nil {
				f.calls.Fail["patch Deployment/podinfo-primary"] = tc.fail
			}

			err := f.r.orphanGenerated(context.Background(), canary)

			if tc.fail == injectedFault {
				if !apierrors.IsServiceUnavailable(err) {
					t.Fatalf("orphanGenerated: %v, want the injected fault", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("orphanGenerated: %v", err)
			}
			if patched := slices.Contains(f.calls.Writes, "patch Deployment/podinfo-primary"); patched != tc.wantPatched {
				t.Errorf("the primary patched: %v, want %v (writes %v)", patched, tc.wantPatched, f.calls.Writes)
			}
			for _, name := range []string{canary.GetServiceName(), canary.GetPrimaryServiceName()} {
				svc := &corev1.Service{}
				f.get(name, svc)
				if metav1.IsControlledBy(svc, canary) {
					t.Errorf("Service %s is still controlled by the Canary: %v", name, svc.OwnerReferences)
				}
			}
			if !tc.deleting && tc.fail == nil {
				p := &appsv1.Deployment{}
				f.get(primary.Name, p)
				if metav1.IsControlledBy(p, canary) {
					t.Errorf("the primary is still controlled by the Canary: %v", p.OwnerReferences)
				}
			}
		})
	}
}

// The last reconcile of a deleted Canary removes its finalizer, and the
// API server deletes it at once: the status patch that follows finds
// nothing, which is no error (the patcher aggregates its errors, which
// apierrors.IsNotFound alone does not see through: every deletion logged a
// reconcile error and was requeued). A Canary that carries the finalizer's
// legacy name (set by an agent older than the rename) goes the same way.
func TestReconcile_DeletedCanaryGoesWithoutError(t *testing.T) {
	for name, finalizers := range map[string][]string{
		"the finalizer":        {v1alpha1.CanaryFinalizer},
		"the legacy name only": {v1alpha1.LegacyCanaryFinalizer},
		"both names":           {v1alpha1.LegacyCanaryFinalizer, v1alpha1.CanaryFinalizer},
	} {
		t.Run(name, func(t *testing.T) {
			canary := podinfoCanary().Obj()
			canary.Finalizers = finalizers
			now := metav1.Now()
			canary.DeletionTimestamp = &now
			f := newActionReconciler(t, canary)

			res, err := f.r.Reconcile(ctrl.LoggerInto(context.Background(), ctrl.Log), reconcileRequest(client.ObjectKeyFromObject(canary)))
			if err != nil {
				t.Fatalf("Reconcile: %v", err)
			}
			if res != (ctrl.Result{}) {
				t.Errorf("Reconcile: %+v, want no requeue", res)
			}
			if f.get(canary.Name, &v1alpha1.Canary{}) {
				t.Errorf("the Canary is still there (writes %v)", f.calls.Writes)
			}
		})
	}
}

// In a namespace being deleted, the namespace controller deletes the
// generated Services and Deployments while the Canaries are still there,
// and the API server refuses to create anything new (NamespaceLifecycle: a
// 403 with the NamespaceTerminating cause). A Canary that would re-create
// them neither writes its status nor returns an error: a retry would back
// off, and hold the Canary's own deletion behind it.
func TestReconcile_NamespaceTerminatingIsNoError(t *testing.T) {
	canary := podinfoCanary().Obj()
	canary.Finalizers = []string{v1alpha1.CanaryFinalizer}
	f := newActionReconciler(t, canary, podinfoTarget(2))
	terminating := apierrors.NewForbidden(schema.GroupResource{Resource: "services"}, "podinfo",
		errors.New("unable to create new content in namespace apps because it is being terminated"))
	terminating.ErrStatus.Details.Causes = append(terminating.ErrStatus.Details.Causes, metav1.StatusCause{Type: corev1.NamespaceTerminatingCause})
	f.calls.Fail["create Service/podinfo"] = terminating

	res, err := f.r.Reconcile(ctrl.LoggerInto(context.Background(), ctrl.Log), reconcileRequest(client.ObjectKeyFromObject(canary)))
	if err != nil {
		t.Fatalf("Reconcile: %v, want no error", err)
	}
	if res != (ctrl.Result{}) {
		t.Errorf("Reconcile: %+v, want no requeue", res)
	}
	for _, w := range f.calls.Writes {
		if strings.HasPrefix(w, "patch-status ") {
			t.Errorf("the status was written in a namespace being deleted (writes %v)", f.calls.Writes)
		}
	}

	// Any other refusal is still an error, in the status and retried.
	f.calls.Fail["create Service/podinfo"] = apierrors.NewForbidden(schema.GroupResource{Resource: "services"}, "podinfo", errors.New("quota"))
	if _, err := f.r.Reconcile(ctrl.LoggerInto(context.Background(), ctrl.Log), reconcileRequest(client.ObjectKeyFromObject(canary))); !apierrors.IsForbidden(err) {
		t.Errorf("Reconcile: %v, want the 403", err)
	}
}
