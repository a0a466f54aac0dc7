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
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
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
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// faultWorld is a small, fast stand-in for the cluster in which the
// reconciler runs for the write-ordering tests: a fake client whose n-th
// write (of the reconciler, not of the world) fails, and a world step that
// plays the Deployment controller (every Deployment becomes ready at its
// spec) and the gateway (every HTTPRoute generation is accepted). The
// envtest and e2e tiers prove the same behaviours on real controllers;
// this one can fail every single write in turn.
type faultWorld struct {
	t      *testing.T
	c      client.WithWatch
	r      *CanaryReconciler
	now    time.Time
	key    types.NamespacedName
	writes []string // the reconciler's writes, in order
	// cachedReads are the types the reconciler read through its cached
	// client (the APIReader is not counted), in order.
	cachedReads []string
	failAt      int  // the write to fail (1-based); 0: none
	world       bool // true while the world itself writes
	// brokenAsPrimary is an image whose pods never get ready in the
	// primary: its Deployment exceeds its progress deadline.
	brokenAsPrimary string
	log             []string // transcript, for failure messages
}

func newFaultWorld(t *testing.T, failAt int, objs ...client.Object) *faultWorld {
	t.Helper()
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = v1alpha1.AddToScheme(s)
	_ = gatewayv1.Install(s)
	w := &faultWorld{t: t, failAt: failAt, now: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
	uncached := fake.NewClientBuilder().WithScheme(s).
		WithObjects(objs...).
		WithStatusSubresource(&v1alpha1.Canary{}, &appsv1.Deployment{}, &gatewayv1.HTTPRoute{}).
		WithIndex(&v1alpha1.Canary{}, claimsIndexKey, claimKeys).
		WithIndex(&v1alpha1.CanaryGroup{}, groupMembersIndexKey, groupMembers).
		Build()
	w.c = interceptor.NewClient(uncached, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, o client.Object, opts ...client.GetOption) error {
			w.read(o)
			return c.Get(ctx, key, o, opts...)
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			w.read(list)
			return c.List(ctx, list, opts...)
		},
		Create: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.CreateOption) error {
			if err := w.write("create", o); err != nil {
				return err
			}
			return c.Create(ctx, o, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.UpdateOption) error {
			if err := w.write("update", o); err != nil {
				return err
			}
			return c.Update(ctx, o, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, o client.Object, p client.Patch, opts ...client.PatchOption) error {
			if err := w.write("patch", o); err != nil {
				return err
			}
			return c.Patch(ctx, o, p, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.DeleteOption) error {
			if err := w.write("delete", o); err != nil {
				return err
			}
			return c.Delete(ctx, o, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, o client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			if err := w.write("patch-"+sub, o); err != nil {
				return err
			}
			return c.SubResource(sub).Patch(ctx, o, p, opts...)
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, o client.Object, opts ...client.SubResourceUpdateOption) error {
			if err := w.write("update-"+sub, o); err != nil {
				return err
			}
			return c.SubResource(sub).Update(ctx, o, opts...)
		},
	})
	w.r = &CanaryReconciler{
		Client:         w.c,
		EventRecorder:  record.NewFakeRecorder(1000),
		ControllerName: ControllerName,
		Clock:          func() time.Time { return w.now },
	}
	w.r.setDefaults(w.c, uncached)
	for _, o := range objs {
		if c, ok := o.(*v1alpha1.Canary); ok {
			w.key = client.ObjectKeyFromObject(c)
		}
	}
	return w
}

// write counts one write of the reconciler and fails the chosen one.
func (w *faultWorld) write(verb string, o client.Object) error {
	if w.world {
		return nil
	}
	kind := fmt.Sprintf("%T", o)
	kind = kind[strings.LastIndex(kind, ".")+1:]
	w.writes = append(w.writes, fmt.Sprintf("%s %s/%s", verb, kind, o.GetName()))
	if len(w.writes) == w.failAt {
		w.log = append(w.log, "  injected failure: "+w.writes[len(w.writes)-1])
		return apierrors.NewServiceUnavailable("injected fault")
	}
	return nil
}

// read records a read of the reconciler through the cached client.
func (w *faultWorld) read(o runtime.Object) {
	if !w.world {
		w.cachedReads = append(w.cachedReads, fmt.Sprintf("%T", o))
	}
}

// runUntil reconciles, lets the world react and moves the clock, until done
// says the Canary got where it should, or fails the test with a transcript.
func (w *faultWorld) runUntil(what string, done func(c *v1alpha1.Canary) bool) {
	w.t.Helper()
	for range 300 {
		c := w.canary()
		if done(c) {
			return
		}
		unsafeBefore := w.unsafeRoutes()
		res, err := w.r.Reconcile(context.Background(), reconcileRequest(w.key))
		c = w.canary()
		w.log = append(w.log, fmt.Sprintf("%s phase=%s weight=%d applied=%.8s promoted=%.8s err=%v", w.now.Format("15:04:05.000"), c.Status.Phase, c.Status.CanaryWeight, c.Status.LastAppliedSpec, c.Status.LastPromotedSpec, err))
		// A reconcile must leave traffic only on sides with a ready
		// replica; one whose write failed must at least not make it worse
		// (the world can darken a side between two reconciles).
		if unsafe := w.unsafeRoutes(); len(unsafe) > 0 && (err == nil || len(unsafeBefore) == 0) {
			w.t.Errorf("%v (fail at write %d):\n%s", unsafe, w.failAt, strings.Join(w.log, "\n"))
		}
		w.react()
		switch {
		case err != nil:
			w.now = w.now.Add(time.Second) // the work queue's backoff
		case res.RequeueAfter > 0:
			w.now = w.now.Add(min(res.RequeueAfter, 10*time.Second))
		default:
			w.now = w.now.Add(time.Second)
		}
	}
	w.t.Fatalf("never %s (fail at write %d):\n%s", what, w.failAt, strings.Join(w.log, "\n"))
}

func (w *faultWorld) canary() *v1alpha1.Canary {
	c := &v1alpha1.Canary{}
	defer w.worldWrites()()
	if err := w.c.Get(context.Background(), w.key, c); err != nil {
		w.t.Fatal(err)
	}
	return c
}

// react plays the Deployment controller and the gateway: Deployments run
// their spec on ready replicas, HTTPRoutes are accepted.
func (w *faultWorld) react() {
	ctx := context.Background()
	defer w.worldWrites()()
	var deps appsv1.DeploymentList
	if err := w.c.List(ctx, &deps); err != nil {
		w.t.Fatal(err)
	}
	for i := range deps.Items {
		d := &deps.Items[i]
		n := int32(1)
		if d.Spec.Replicas != nil {
			n = *d.Spec.Replicas
		}
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n}
		if w.brokenAsPrimary != "" && strings.HasSuffix(d.Name, "-primary") && d.Spec.Template.Spec.Containers[0].Image == w.brokenAsPrimary {
			d.Status.ReadyReplicas, d.Status.AvailableReplicas = 0, 0
			d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"}}
		}
		if err := w.c.Status().Update(ctx, d); err != nil {
			w.t.Fatal(err)
		}
	}
	var routes gatewayv1.HTTPRouteList
	if err := w.c.List(ctx, &routes); err != nil {
		if apimeta.IsNoMatchError(err) {
			return
		}
		w.t.Fatal(err)
	}
	for i := range routes.Items {
		rt := &routes.Items[i]
		rt.Status.Parents = nil
		for _, ref := range rt.Spec.ParentRefs {
			ps := gatewayv1.RouteParentStatus{ParentRef: ref, ControllerName: "example.com/gateway"}
			for _, t := range []gatewayv1.RouteConditionType{gatewayv1.RouteConditionAccepted, gatewayv1.RouteConditionResolvedRefs} {
				ps.Conditions = append(ps.Conditions, metav1.Condition{Type: string(t), Status: metav1.ConditionTrue, Reason: string(t),
					ObservedGeneration: rt.Generation, LastTransitionTime: metav1.NewTime(w.now)})
			}
			rt.Status.Parents = append(rt.Status.Parents, ps)
		}
		if err := w.c.Status().Update(ctx, rt); err != nil {
			w.t.Fatal(err)
		}
	}
}

// unsafeRoutes lists the backends the routing objects send traffic to
// while they have no ready replica.
func (w *faultWorld) unsafeRoutes() []string {
	ctx := context.Background()
	defer w.worldWrites()()
	c := w.canary()
	if c.Status.Phase == "" || c.Status.Phase == v1alpha1.PhaseInitializing {
		return nil // the generated route carries no traffic before it exists
	}
	var rt gatewayv1.HTTPRoute
	if err := w.c.Get(ctx, types.NamespacedName{Namespace: c.Namespace, Name: c.GetServiceName()}, &rt); err != nil {
		return nil // blue/green: no route
	}
	var unsafe []string
	for _, rule := range rt.Spec.Rules {
		for _, b := range rule.BackendRefs {
			if b.Weight == nil || *b.Weight == 0 {
				continue
			}
			name := c.GetPrimaryName()
			if string(b.Name) == c.GetCanaryServiceName() {
				name = c.Spec.TargetRef.Name
			}
			d := &appsv1.Deployment{}
			if err := w.c.Get(ctx, types.NamespacedName{Namespace: c.Namespace, Name: name}, d); err != nil || d.Status.ReadyReplicas == 0 {
				unsafe = append(unsafe, fmt.Sprintf("route sends weight %d to %s, which has no ready replica", *b.Weight, b.Name))
			}
		}
	}
	return unsafe
}

// worldWrites marks the writes until the returned func runs as the
// world's, which the fault injection skips.
func (w *faultWorld) worldWrites() func() {
	was := w.world
	w.world = true
	return func() { w.world = was }
}

// setImage changes the target's image, as kustomize-controller applying a
// new commit would.
func (w *faultWorld) setImage(name, image string) {
	w.t.Helper()
	defer w.worldWrites()()
	d := &appsv1.Deployment{}
	if err := w.c.Get(context.Background(), types.NamespacedName{Namespace: w.key.Namespace, Name: name}, d); err != nil {
		w.t.Fatal(err)
	}
	d.Spec.Template.Spec.Containers[0].Image = image
	if err := w.c.Update(context.Background(), d); err != nil {
		w.t.Fatal(err)
	}
}

// deployment reads a Deployment of the world.
func (w *faultWorld) deployment(name string) *appsv1.Deployment {
	w.t.Helper()
	defer w.worldWrites()()
	d := &appsv1.Deployment{}
	if err := w.c.Get(context.Background(), types.NamespacedName{Namespace: w.key.Namespace, Name: name}, d); err != nil {
		w.t.Fatalf("deployment %s: %v", name, err)
	}
	return d
}

// do runs f with the world's writes, which the fault injection skips.
func (w *faultWorld) do(f func(ctx context.Context, c client.Client) error) {
	w.t.Helper()
	defer w.worldWrites()()
	if err := f(context.Background(), w.c); err != nil {
		w.t.Fatal(err)
	}
}

// routeWeights returns the primary's and the canary's weights in the route.
func (w *faultWorld) routeWeights() (primary, canary int32) {
	w.t.Helper()
	c := w.canary()
	var rt gatewayv1.HTTPRoute
	w.do(func(ctx context.Context, cl client.Client) error {
		return cl.Get(ctx, types.NamespacedName{Namespace: c.Namespace, Name: c.GetServiceName()}, &rt)
	})
	for _, b := range rt.Spec.Rules[0].BackendRefs {
		if string(b.Name) == c.GetCanaryServiceName() {
			canary = *b.Weight
		} else {
			primary = *b.Weight
		}
	}
	return primary, canary
}

func reconcileRequest(key types.NamespacedName) ctrl.Request {
	return ctrl.Request{NamespacedName: key}
}

// annotate sets an annotation on the Canary, as the CLI does.
func (w *faultWorld) annotate(key, value string) {
	w.t.Helper()
	w.do(func(ctx context.Context, cl client.Client) error {
		c := w.canary()
		if c.Annotations == nil {
			c.Annotations = map[string]string{}
		}
		c.Annotations[key] = value
		return cl.Update(ctx, c)
	})
}
