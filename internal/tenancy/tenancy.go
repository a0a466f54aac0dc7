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

// Package tenancy is serin's share of Flux's multi-tenancy model: which
// namespaces a Canary's references may reach (--no-cross-namespace-refs)
// and as whom serin acts on a Canary's behalf (spec.serviceAccountName and
// --default-service-account, impersonated as kustomize-controller and
// helm-controller do). docs/security.md says what serin reads and writes,
// and as whom.
package tenancy

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/fluxcd/pkg/runtime/acl"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// Options are the agent's tenancy flags, named and meant as Flux's.
type Options struct {
	// NoCrossNamespaceRefs refuses every reference from a Canary to an
	// object in another namespace: alerts[].providerRef,
	// metrics[].templateRef and the Flux object that applied the target.
	NoCrossNamespaceRefs bool
	// DefaultServiceAccount is the service account, in the Canary's
	// namespace, that serin impersonates for a Canary without
	// spec.serviceAccountName; empty means serin acts as itself.
	DefaultServiceAccount string
}

// Tenancy decides, for each Canary, what it may reference and builds the
// clients serin acts through on its behalf. A nil *Tenancy allows every
// reference and acts as the agent, reading Secrets with the Reader it was
// given by Static.
type Tenancy struct {
	opts Options
	// agent is the agent's own client; agentReader its uncached reader.
	agent       client.Client
	agentReader client.Reader
	// newClient builds a client that impersonates a user; nil disables
	// impersonation (a test's fake world).
	newClient func(user string) (client.Client, error)
	// restConfig reaches the API server as the agent; nil in a test's
	// fake world.
	restConfig *rest.Config

	mu      sync.Mutex
	clients map[string]client.Client
}

// maxClients bounds the impersonating clients kept: one per service account
// in use. Past it the map starts over; a client is cheap to build again
// (the REST mapper and the TLS transport are shared).
const maxClients = 4096

// New returns the Tenancy of an agent that talks to the API server of cfg.
// agent is the manager's client and agentReader its uncached reader.
func New(cfg *rest.Config, scheme *runtime.Scheme, mapper meta.RESTMapper, agent client.Client, agentReader client.Reader, opts Options) *Tenancy {
	t := &Tenancy{opts: opts, agent: agent, agentReader: agentReader, clients: map[string]client.Client{}, restConfig: cfg}
	t.newClient = func(user string) (client.Client, error) {
		c := rest.CopyConfig(cfg)
		c.Impersonate = rest.ImpersonationConfig{UserName: user}
		httpClient, err := rest.HTTPClientFor(c)
		if err != nil {
			return nil, err
		}
		return client.New(c, client.Options{Scheme: scheme, Mapper: mapper, HTTPClient: httpClient})
	}
	return t
}

// Static returns a Tenancy without impersonation, for tests: agent acts and
// reader reads Secrets; opts.DefaultServiceAccount is ignored.
func Static(agent client.Client, reader client.Reader, opts Options) *Tenancy {
	opts.DefaultServiceAccount = ""
	return &Tenancy{opts: opts, agent: agent, agentReader: reader, clients: map[string]client.Client{}}
}

// Options returns the flags the Tenancy was built with.
func (t *Tenancy) Options() Options {
	if t == nil {
		return Options{}
	}
	return t.opts
}

// ServiceAccount returns the service account serin acts as for c, in c's
// namespace, or "" when it acts as itself.
func (t *Tenancy) ServiceAccount(c *v1alpha1.Canary) string {
	if t == nil || t.newClient == nil {
		return ""
	}
	if sa := c.Spec.ServiceAccountName; sa != "" {
		return sa
	}
	return t.opts.DefaultServiceAccount
}

// Username is the Kubernetes user serin impersonates for c, or "" when it
// acts as itself.
func (t *Tenancy) Username(c *v1alpha1.Canary) string {
	sa := t.ServiceAccount(c)
	if sa == "" {
		return ""
	}
	return ServiceAccountUser(c.Namespace, sa)
}

// ServiceAccountUser is the user name of a service account, as the API
// server authenticates it.
func ServiceAccountUser(namespace, name string) string {
	return fmt.Sprintf("system:serviceaccount:%s:%s", namespace, name)
}

// CheckRef returns an acl.AccessDeniedError when c may not reference the
// object ref (of the kind named, for the message): refs to another
// namespace are refused under --no-cross-namespace-refs.
func (t *Tenancy) CheckRef(c *v1alpha1.Canary, field, kind string, ref types.NamespacedName) error {
	if t == nil || !t.opts.NoCrossNamespaceRefs || ref.Namespace == "" || ref.Namespace == c.Namespace {
		return nil
	}
	return acl.AccessDeniedError(fmt.Sprintf(
		"%s refers to %s %s in another namespace, and cross-namespace references are disabled (--no-cross-namespace-refs): use a %s in namespace %s",
		field, kind, ref, kind, c.Namespace))
}

// Client returns the client serin writes through on c's behalf: the
// agent's own, or one that impersonates c's service account.
func (t *Tenancy) Client(c *v1alpha1.Canary) (client.Client, error) {
	if t == nil {
		return nil, fmt.Errorf("no tenancy configured")
	}
	user := t.Username(c)
	if user == "" {
		return t.agent, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if cl, ok := t.clients[user]; ok {
		return cl, nil
	}
	cl, err := t.newClient(user)
	if err != nil {
		return nil, fmt.Errorf("failed to build a client impersonating %s: %w", user, err)
	}
	if len(t.clients) >= maxClients {
		t.clients = map[string]client.Client{}
	}
	t.clients[user] = cl
	return cl, nil
}

// RESTConfig returns the configuration of the API server calls serin makes
// on c's behalf outside its clients (the external metrics API): the
// agent's, impersonating c's service account when one applies.
func (t *Tenancy) RESTConfig(c *v1alpha1.Canary) (*rest.Config, error) {
	if t == nil || t.restConfig == nil {
		return nil, fmt.Errorf("no API server configured")
	}
	cfg := rest.CopyConfig(t.restConfig)
	if user := t.Username(c); user != "" {
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	}
	return cfg, nil
}

// SecretReader returns the reader of the Secrets serin reads on c's behalf
// (a MetricTemplate's, a Provider's, a webhook's signing key): uncached, so
// that no Secret informer holds the cluster's Secrets, and as c's service
// account when one applies.
func (t *Tenancy) SecretReader(c *v1alpha1.Canary) (client.Reader, error) {
	if t == nil {
		return nil, fmt.Errorf("no tenancy configured")
	}
	if t.Username(c) == "" {
		return t.agentReader, nil
	}
	return t.Client(c)
}

// AccessError explains a Forbidden answer to a call made as c's service
// account: which account, and that its RBAC must allow the call. Other
// errors are returned as they are.
func (t *Tenancy) AccessError(c *v1alpha1.Canary, err error) error {
	user := t.Username(c)
	var explained *ForbiddenError
	// A namespace being deleted refuses new objects with a 403 too: not
	// a missing grant.
	if user == "" || !apierrors.IsForbidden(err) || errors.As(err, &explained) ||
		apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
		return err
	}
	return &ForbiddenError{User: user, Err: err}
}

// ForbiddenError is a call refused to the service account serin acts as.
type ForbiddenError struct {
	User string
	Err  error
}

func (e *ForbiddenError) Error() string {
	return fmt.Sprintf("serin acts as %s for this Canary, and the API server refused it: %v; "+
		"grant that service account the Role of docs/security.md#tenant-service-accounts", e.User, e.Err)
}

func (e *ForbiddenError) Unwrap() error { return e.Err }

// contextKey carries the client of the Canary being reconciled.
type contextKey struct{}

// WithClient returns ctx carrying the client writes on behalf of the
// Canary being reconciled go through.
func WithClient(ctx context.Context, c client.Client) context.Context {
	return context.WithValue(ctx, contextKey{}, c)
}

// ClientFrom returns the client WithClient put in ctx.
func ClientFrom(ctx context.Context) (client.Client, bool) {
	c, ok := ctx.Value(contextKey{}).(client.Client)
	return c, ok
}
