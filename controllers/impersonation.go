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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/fluxowner"
	"github.com/serin-dev/serin/internal/tenancy"
)

// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=impersonate

// accessDeniedRetry is how soon a reconcile refused by the API server to the
// Canary's service account is tried again: the fix is a RoleBinding, which
// no watch of serin's sees.
const accessDeniedRetry = 15 * time.Second

// actAs returns ctx carrying the client that writes on obj's behalf: one
// impersonating its service account (spec.serviceAccountName or the
// agent's --default-service-account), or the agent's own.
func (r *CanaryReconciler) actAs(ctx context.Context, obj *v1alpha1.Canary) (context.Context, error) {
	if r.Tenancy == nil {
		return ctx, nil
	}
	c, err := r.Tenancy.Client(obj)
	if err != nil {
		return ctx, err
	}
	if user := r.Tenancy.Username(obj); user != "" {
		ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("impersonating", user))
	}
	return tenancy.WithClient(ctx, c), nil
}

// accessDenied turns a write the API server refused to the Canary's service
// account into a wait whose message names the account and the fix.
func (r *CanaryReconciler) accessDenied(obj *v1alpha1.Canary, err error) error {
	if err == nil || r.Tenancy == nil {
		return err
	}
	var forbidden *tenancy.ForbiddenError
	if !errors.As(r.Tenancy.AccessError(obj, err), &forbidden) {
		return err
	}
	return &waitingError{Reason: v1alpha1.AccessDeniedReason, Err: forbidden, RequeueAfter: accessDeniedRetry}
}

// refusedRefs says which of the Canary's references to other namespaces
// the agent refuses (--no-cross-namespace-refs), or "" when none.
func (r *CanaryReconciler) refusedRefs(obj *v1alpha1.Canary) string {
	var errs []error
	for i, a := range obj.Spec.Alerts {
		key := types.NamespacedName{Namespace: a.ProviderRef.Namespace, Name: a.ProviderRef.Name}
		errs = append(errs, r.Tenancy.CheckRef(obj, fmt.Sprintf("spec.alerts[%d].providerRef", i), "Provider", key))
	}
	if a := obj.Spec.Analysis; a != nil {
		for i, m := range a.Metrics {
			if m.TemplateRef == nil {
				continue
			}
			key := types.NamespacedName{Namespace: m.TemplateRef.Namespace, Name: m.TemplateRef.Name}
			errs = append(errs, r.Tenancy.CheckRef(obj, fmt.Sprintf("spec.analysis.metrics[%d].templateRef", i), "MetricTemplate", key))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err.Error()
	}
	return ""
}

// ownerRevision returns the source revision of the Flux object that applied
// target, once fluxowner.Verify found that object's inventory lists the
// target; "" otherwise: a revision is information, never a requirement.
func (r *CanaryReconciler) ownerRevision(ctx context.Context, obj *v1alpha1.Canary, target client.Object, gk schema.GroupKind) string {
	applied, found, err := fluxowner.Verify(ctx, r.APIReader, target, gk, !r.Tenancy.Options().NoCrossNamespaceRefs)
	if err != nil {
		ctrl.LoggerFrom(ctx).Info("the target's Flux owner is not used", "reason", err.Error())
		return ""
	}
	if !found {
		return ""
	}
	return applied.Revision
}

// tenantClient is the reconciler's client: reads come from the agent's
// cache, and writes go through the client in the context (actAs), so that
// everything serin writes in a tenant's namespace is written as the
// tenant's service account. The Canary itself (its finalizer and status)
// is the agent's to write.
type tenantClient struct {
	client.Client
	// scope labels what serin writes for the agent's label-selected
	// caches, and reads live what they do not hold (cache_scope.go).
	scope scope
}

// Get reads from the cache; an object of a label-selected kind the cache
// does not hold is read live and labelled, so that it is cached from then
// on (scope.adopt).
func (c tenantClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	err := c.Client.Get(ctx, key, obj, opts...)
	if !apierrors.IsNotFound(err) || !c.scope.labelled(obj) {
		return err
	}
	return c.scope.adopt(ctx, c.writer(ctx, obj), key, obj, err)
}

func (c tenantClient) writer(ctx context.Context, obj runtime.Object) client.Writer {
	if _, ok := obj.(*v1alpha1.Canary); ok {
		return c.Client
	}
	if w, ok := tenancy.ClientFrom(ctx); ok {
		return w
	}
	return c.Client
}

func (c tenantClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	c.scope.label(obj)
	return c.writer(ctx, obj).Create(ctx, obj, opts...)
}

func (c tenantClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	c.scope.label(obj)
	return c.writer(ctx, obj).Update(ctx, obj, opts...)
}

func (c tenantClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	c.scope.label(obj)
	return c.writer(ctx, obj).Patch(ctx, obj, patch, opts...)
}

func (c tenantClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	return c.writer(ctx, obj).Delete(ctx, obj, opts...)
}

func (c tenantClient) DeleteAllOf(ctx context.Context, obj client.Object, opts ...client.DeleteAllOfOption) error {
	return c.writer(ctx, obj).DeleteAllOf(ctx, obj, opts...)
}

func (c tenantClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	if w, ok := tenancy.ClientFrom(ctx); ok {
		return w.Apply(ctx, obj, opts...)
	}
	return c.Client.Apply(ctx, obj, opts...)
}

func (c tenantClient) Status() client.SubResourceWriter { return c.SubResource("status") }

func (c tenantClient) SubResource(name string) client.SubResourceClient {
	return tenantSubResource{agent: c.Client.SubResource(name), name: name}
}

// tenantSubResource routes subresource writes as tenantClient does.
type tenantSubResource struct {
	agent client.SubResourceClient
	name  string
}

func (s tenantSubResource) writer(ctx context.Context, obj client.Object) client.SubResourceWriter {
	if _, ok := obj.(*v1alpha1.Canary); ok {
		return s.agent
	}
	if w, ok := tenancy.ClientFrom(ctx); ok {
		return w.SubResource(s.name)
	}
	return s.agent
}

func (s tenantSubResource) Get(ctx context.Context, obj, sub client.Object, opts ...client.SubResourceGetOption) error {
	return s.agent.Get(ctx, obj, sub, opts...)
}

func (s tenantSubResource) Create(ctx context.Context, obj, sub client.Object, opts ...client.SubResourceCreateOption) error {
	return s.writer(ctx, obj).Create(ctx, obj, sub, opts...)
}

func (s tenantSubResource) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	return s.writer(ctx, obj).Update(ctx, obj, opts...)
}

func (s tenantSubResource) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	return s.writer(ctx, obj).Patch(ctx, obj, patch, opts...)
}

func (s tenantSubResource) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
	if w, ok := tenancy.ClientFrom(ctx); ok {
		return w.SubResource(s.name).Apply(ctx, obj, opts...)
	}
	return s.agent.Apply(ctx, obj, opts...)
}
