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
	"fmt"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	"github.com/hashicorp/go-retryablehttp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/fluxowner"
)

// notificationControllerDeadline bounds one event's delivery, retries included.
const notificationControllerDeadline = time.Minute

// sendToNotificationController posts the event to notification-controller
// as a Flux event: about the Flux object that applied the target (owner
// mode, when there is one) or about the Canary.
func (b *Bridge) sendToNotificationController(ctx context.Context, j job, mode Mode) error {
	log := logr.FromContextOrDiscard(ctx)
	f := eventFields{canary: j.canary, event: j.event, revision: j.event.Revision, at: j.at}
	obj, group := canaryReference(j.canary), v1alpha1.GroupVersion.Group
	if mode == ModeOwner {
		if owner, ok := b.ownerOf(ctx, j.canary); ok {
			// Verified: the owner's inventory lists the target.
			obj = corev1.ObjectReference{
				APIVersion: schema.GroupVersion{Group: owner.Group, Version: owner.Version}.String(),
				Kind:       owner.Kind,
				Namespace:  owner.Namespace,
				Name:       owner.Name,
			}
			group = owner.Group
			if f.revision == "" {
				f.revision = owner.Revision
			}
		} else {
			log.V(1).Info("target not applied by a Flux Kustomization or HelmRelease: sending the event about the Canary")
		}
	}

	ctx, cancel := context.WithTimeout(ctx, notificationControllerDeadline)
	defer cancel()
	ep := endpoint{attemptTimeout: b.opts.EventsTimeout, checkRetry: retryUnlessDuplicate}
	for _, ev := range f.fluxEvents(obj, group, b.opts.ReportingController, b.opts.ReportingInstance) {
		body, err := json.Marshal(ev)
		if err != nil {
			return fmt.Errorf("failed to marshal the event: %w", err)
		}
		req := request{url: b.opts.EventsAddr, body: body, validate: acceptDuplicate}
		if err := post(ctx, b.opts.Retry, ep, req); err != nil {
			return err
		}
		log.V(1).Info("sent event to notification-controller", "involvedObject", obj.Kind+"/"+obj.Namespace+"/"+obj.Name,
			"commitStatus", ev.Metadata[group+"/"+MetaCommitStatus] != "")
	}
	return nil
}

// ownerOf returns the Flux object that applied the Canary's target, once
// fluxowner.Verify found it lists the target in its inventory: the labels
// alone, which the tenant writes, would let a Canary speak for the
// platform's Kustomization (its Alerts, its commit statuses).
func (b *Bridge) ownerOf(ctx context.Context, c *v1alpha1.Canary) (fluxowner.Applied, bool) {
	if b.opts.Reader == nil {
		return fluxowner.Applied{}, false
	}
	ref := c.Spec.TargetRef
	key := types.NamespacedName{Namespace: c.Namespace, Name: ref.Name}
	gk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind).GroupKind()
	var target client.Object
	switch ref.Kind {
	case v1alpha1.DeploymentKind:
		target = &appsv1.Deployment{}
	case v1alpha1.ServiceKind:
		target = &corev1.Service{}
	default:
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind))
		target = m
	}
	if err := b.opts.Reader.Get(ctx, key, target); err != nil {
		logr.FromContextOrDiscard(ctx).V(1).Info("cannot read the target to find its Flux owner", "error", err.Error())
		return fluxowner.Applied{}, false
	}
	applied, found, err := fluxowner.Verify(ctx, b.opts.APIReader, target, gk, !b.opts.Tenancy.Options().NoCrossNamespaceRefs)
	if err != nil {
		logr.FromContextOrDiscard(ctx).Info("the target's Flux owner is not used: sending the event about the Canary", "reason", err.Error())
		return fluxowner.Applied{}, false
	}
	return applied, found
}

// retryUnlessDuplicate retries connection errors and 5xx answers, not 429:
// notification-controller answers 429 to an event it already has.
func retryUnlessDuplicate(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if resp != nil && resp.StatusCode == http.StatusTooManyRequests {
		return false, nil
	}
	return retryablehttp.DefaultRetryPolicy(ctx, resp, err)
}

// acceptDuplicate takes 2xx, and 429 (a duplicate within
// notification-controller's rate-limit window), as delivered.
func acceptDuplicate(resp *http.Response) error {
	if resp.StatusCode == http.StatusTooManyRequests {
		return nil
	}
	return expect2xx(resp)
}
