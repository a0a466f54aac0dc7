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
	"errors"
	"fmt"
	"strings"
	"time"

	notificationv1 "github.com/fluxcd/notification-controller/api/v1beta3"
	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// DefaultMaxProviderTimeout bounds one delivery to a Provider, its
// retries included, whatever the Provider's spec.timeout says, unless
// Options.MaxProviderTimeout is set: a destination that hangs holds its
// own queue that long per event, and nothing else.
const DefaultMaxProviderTimeout = 15 * time.Second

// providersOf returns the Providers of spec.alerts whose severity admits
// the event; a reference the agent refuses (--no-cross-namespace-refs) is
// logged and reported as not ok.
func (b *Bridge) providersOf(ctx context.Context, j job) (keys []types.NamespacedName, ok bool) {
	ok = true
	for _, a := range j.canary.Spec.Alerts {
		if !Allows(a.Severity, j.event.Severity) {
			continue
		}
		key := types.NamespacedName{Namespace: a.ProviderRef.Namespace, Name: a.ProviderRef.Name}
		if key.Namespace == "" {
			key.Namespace = j.canary.Namespace
		}
		if err := b.opts.Tenancy.CheckRef(j.canary, "spec.alerts[].providerRef", "Provider", key); err != nil {
			logr.FromContextOrDiscard(ctx).Error(err, "notification not sent", "provider", key.String())
			ok = false
			continue
		}
		keys = append(keys, key)
	}
	return keys, ok
}

// sendToProviders posts the event to each Provider of spec.alerts whose
// severity admits it, one after the other, and reports whether all took
// it. The workers do not: they hand each Provider its own queue
// (toDestinations).
func (b *Bridge) sendToProviders(ctx context.Context, j job) bool {
	keys, ok := b.providersOf(ctx, j)
	for _, key := range keys {
		if !b.sendToDestination(ctx, j, key) {
			ok = false
		}
	}
	return ok
}

// sendToDestination posts one event to one Provider and logs a failure.
func (b *Bridge) sendToDestination(ctx context.Context, j job, key types.NamespacedName) bool {
	f := eventFields{canary: j.canary, event: j.event, revision: j.event.Revision, at: j.at}
	ev := f.providerEvent(b.opts.ReportingController, b.opts.ReportingInstance)
	which := anyProvider
	if IsVerdict(j.event) {
		which = notCommitStatus
	}
	if err := b.sendToProvider(ctx, j.canary, key, ev, which); err != nil {
		logr.FromContextOrDiscard(ctx).Error(err, "failed to send notification", "provider", key.String())
		return false
	}
	return true
}

// sendToProvider posts one event to one Provider, unless it is suspended
// or its type has nothing to send for the event (errSkip), within the
// Provider's timeout, at most Options.MaxProviderTimeout.
func (b *Bridge) sendToProvider(ctx context.Context, canary *v1alpha1.Canary, key types.NamespacedName, ev eventv1.Event, which sendWhich) error {
	reader := b.opts.APIReader
	if b.opts.Tenancy != nil {
		// As the Canary's service account, when it has one: a tenant
		// reaches only the Providers and Secrets its own RBAC allows.
		var err error
		if reader, err = b.opts.Tenancy.SecretReader(canary); err != nil {
			return err
		}
	}
	if reader == nil {
		return fmt.Errorf("cannot read provider %s: the notifier has no API reader", key)
	}
	p := &notificationv1.Provider{}
	if err := reader.Get(ctx, key, p); err != nil {
		return fmt.Errorf("failed to get provider: %w", err)
	}
	if p.Spec.Suspend {
		logr.FromContextOrDiscard(ctx).V(1).Info("provider suspended: not sending", "provider", key.String())
		return nil
	}
	if which == commitStatusOnly && !commitStatusTypes[p.Spec.Type] || which == notCommitStatus && commitStatusTypes[p.Spec.Type] {
		return nil
	}
	format, ok := formatters[p.Spec.Type]
	if !ok {
		return fmt.Errorf("provider type %q is not supported by serin's direct mode (supported: %v)", p.Spec.Type, SupportedProviderTypes())
	}
	ctx, cancel := context.WithTimeout(ctx, min(p.GetTimeout(), b.opts.MaxProviderTimeout))
	defer cancel()
	cfg, err := resolveProvider(ctx, reader, p)
	if err != nil {
		return err
	}
	cfg.cluster = b.opts.ClusterName
	req, err := format(cfg, ev)
	if errors.Is(err, errSkip) {
		logr.FromContextOrDiscard(ctx).V(1).Info("nothing to send for this event", "provider", key.String(), "type", p.Spec.Type)
		return nil
	}
	if err != nil {
		return redact(err, cfg.address, cfg.token)
	}
	if commitStatusTypes[p.Spec.Type] {
		return b.postCommitStatus(ctx, key, cfg, ev, req)
	}
	return redact(post(ctx, b.opts.Retry, cfg.endpoint, req), cfg.address, cfg.token)
}

// postCommitStatus posts a commit status unless a newer event's status of
// the same commit and context was posted to the Provider already (a
// pending that waited in the queue while the verdict went out), one post
// of a commit and context at a time.
func (b *Bridge) postCommitStatus(ctx context.Context, key types.NamespacedName, cfg providerConfig, ev eventv1.Event, req request) error {
	s, err := commitStatusOf(ev, cfg.cluster)
	if err != nil {
		return redact(err, cfg.address, cfg.token)
	}
	k := statusKey{provider: key, sha: s.sha, context: s.context}
	release, err := b.statuses.acquire(ctx, k)
	if err != nil {
		return err
	}
	defer release()
	if b.statuses.stale(k, ev.Timestamp.Time) {
		logr.FromContextOrDiscard(ctx).V(1).Info("a newer status of this commit was posted: not sending this one",
			"provider", key.String(), "commit", s.sha, "state", s.state)
		return nil
	}
	if err := post(ctx, b.opts.Retry, cfg.endpoint, req); err != nil {
		return redact(err, cfg.address, cfg.token)
	}
	b.statuses.posted(k, ev.Timestamp.Time)
	return nil
}

// commitStatusTypes are the Provider types that set commit statuses.
var commitStatusTypes = map[string]bool{
	notificationv1.GitHubProvider: true,
	notificationv1.GitLabProvider: true,
	notificationv1.GiteaProvider:  true,
}

// sendWhich selects the Provider types an event goes to.
type sendWhich int

const (
	// anyProvider: every type.
	anyProvider sendWhich = iota
	// commitStatusOnly: a verdict's commit status, delivered by
	// DeliverCommitStatus.
	commitStatusOnly
	// notCommitStatus: a verdict queued for the other types; its commit
	// status is the Canary's to deliver (DeliverCommitStatus), kept in
	// its status until it arrives.
	notCommitStatus
)

// IsVerdict reports whether e is a verdict the Canary delivers as a
// commit status itself: the phase change to Succeeded, Failed or Halted.
func IsVerdict(e Event) bool {
	switch e.Phase {
	case v1alpha1.PhaseSucceeded, v1alpha1.PhaseFailed, v1alpha1.PhaseHalted:
		return e.Reason == string(e.Phase)
	}
	return false
}

// CommitStatusDeliverer sets a verdict's commit status now, and says
// whether it arrived: the reconciler keeps a verdict in the Canary's
// status until every Provider acknowledged it.
type CommitStatusDeliverer interface {
	// CommitStatusProviders are the Providers of spec.alerts (NAMESPACE/NAME)
	// whose severity admits e: those a verdict owes a status.
	CommitStatusProviders(canary *v1alpha1.Canary, e Event) []string
	// DeliverCommitStatus posts e, a final phase change, to the Provider
	// (NAMESPACE/NAME) when it is a commit-status one (github, gitlab,
	// gitea), with its retries and timeout; any other type is done at
	// once (its notification went through the queue).
	DeliverCommitStatus(ctx context.Context, canary *v1alpha1.Canary, provider string, e Event, at time.Time) error
}

var _ CommitStatusDeliverer = (*Bridge)(nil)

// CommitStatusProviders returns the Providers of spec.alerts that admit e.
func (b *Bridge) CommitStatusProviders(canary *v1alpha1.Canary, e Event) []string {
	keys, _ := b.providersOf(context.Background(), job{canary: canary, event: e})
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, k.String())
	}
	return out
}

// DeliverCommitStatus implements CommitStatusDeliverer.
func (b *Bridge) DeliverCommitStatus(ctx context.Context, canary *v1alpha1.Canary, provider string, e Event, at time.Time) error {
	ns, name, ok := strings.Cut(provider, "/")
	if !ok {
		return fmt.Errorf("invalid provider %q", provider)
	}
	key := types.NamespacedName{Namespace: ns, Name: name}
	if err := b.opts.Tenancy.CheckRef(canary, "spec.alerts[].providerRef", "Provider", key); err != nil {
		return err
	}
	e.Final = true
	f := eventFields{canary: canary, event: e, revision: e.Revision, at: at}
	ev := f.providerEvent(b.opts.ReportingController, b.opts.ReportingInstance)
	return b.sendToProvider(ctx, canary, key, ev, commitStatusOnly)
}
