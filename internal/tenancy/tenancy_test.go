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

package tenancy

import (
	"errors"
	"strings"
	"testing"

	"github.com/fluxcd/pkg/runtime/acl"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
)

func canary(sa string) *v1alpha1.Canary {
	return &v1alpha1.Canary{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team-a"}, Spec: v1alpha1.CanarySpec{ServiceAccountName: sa}}
}

func TestCheckRef(t *testing.T) {
	tests := map[string]struct {
		t      *Tenancy
		ref    types.NamespacedName
		denied bool
	}{
		"no tenancy allows all":                 {ref: types.NamespacedName{Namespace: "team-b", Name: "slack"}},
		"cross-namespace allowed without flag":  {t: Static(nil, nil, Options{}), ref: types.NamespacedName{Namespace: "team-b", Name: "slack"}},
		"own namespace under the flag":          {t: Static(nil, nil, Options{NoCrossNamespaceRefs: true}), ref: types.NamespacedName{Namespace: "team-a", Name: "slack"}},
		"namespace defaulted under the flag":    {t: Static(nil, nil, Options{NoCrossNamespaceRefs: true}), ref: types.NamespacedName{Name: "slack"}},
		"another namespace refused by the flag": {t: Static(nil, nil, Options{NoCrossNamespaceRefs: true}), ref: types.NamespacedName{Namespace: "team-b", Name: "slack"}, denied: true},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			err := tt.t.CheckRef(canary(""), "spec.alerts[0].providerRef", "Provider", tt.ref)
			if got := acl.IsAccessDenied(err); got != tt.denied {
				t.Fatalf("denied = %v (%v), want %v", got, err, tt.denied)
			}
			if tt.denied && !strings.Contains(err.Error(), "spec.alerts[0].providerRef refers to Provider team-b/slack in another namespace") {
				t.Errorf("message = %q", err)
			}
		})
	}
}

func TestServiceAccount(t *testing.T) {
	impersonating := &Tenancy{opts: Options{DefaultServiceAccount: "serin"}, newClient: func(string) (client.Client, error) { return nil, nil }}
	tests := map[string]struct {
		t        *Tenancy
		canarySA string
		wantUser string
	}{
		"no tenancy acts as the agent":           {canarySA: "deployer"},
		"static tenancy never impersonates":      {t: Static(nil, nil, Options{DefaultServiceAccount: "serin"}), canarySA: "deployer"},
		"the default service account":            {t: impersonating, wantUser: "system:serviceaccount:team-a:serin"},
		"the Canary's own overrides the default": {t: impersonating, canarySA: "deployer", wantUser: "system:serviceaccount:team-a:deployer"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tt.t.Username(canary(tt.canarySA)); got != tt.wantUser {
				t.Errorf("Username() = %q, want %q", got, tt.wantUser)
			}
		})
	}
}

func TestAccessError(t *testing.T) {
	impersonating := &Tenancy{newClient: func(string) (client.Client, error) { return nil, nil }}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "services"}, "web", errors.New("no"))
	err := impersonating.AccessError(canary("deployer"), forbidden)
	var explained *ForbiddenError
	if !errors.As(err, &explained) || explained.User != "system:serviceaccount:team-a:deployer" || !apierrors.IsForbidden(err) {
		t.Fatalf("AccessError() = %v, want a ForbiddenError naming the account that still is Forbidden", err)
	}
	if again := impersonating.AccessError(canary("deployer"), err); again != err {
		t.Errorf("AccessError() explained twice: %v", again)
	}
	if got := impersonating.AccessError(canary(""), forbidden); got != error(forbidden) {
		t.Errorf("AccessError() as the agent = %v, want the error as it is", got)
	}
	// What the NamespaceLifecycle admission answers a create in a
	// namespace being deleted: a 403 that no grant would change.
	terminating := apierrors.NewForbidden(schema.GroupResource{Resource: "services"}, "web", errors.New("unable to create new content in namespace team-a because it is being terminated"))
	terminating.ErrStatus.Details.Causes = append(terminating.ErrStatus.Details.Causes, metav1.StatusCause{Type: corev1.NamespaceTerminatingCause})
	if got := impersonating.AccessError(canary("deployer"), terminating); got != error(terminating) {
		t.Errorf("AccessError() of a terminating namespace = %v, want the error as it is", got)
	}
}
