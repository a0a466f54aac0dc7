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

package routing

import (
	"context"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
	"github.com/serin-dev/serin/internal/testing/testutil"
	"github.com/serin-dev/serin/internal/workload"
)

// routerWorld is a fake cluster for the routers' tests: it counts the
// routers' writes ("verb Kind/name") and fails the calls a test names,
// reads included ("get Kind/name"), with the error set for them
// (testutil.Calls).
type routerWorld struct {
	t      *testing.T
	client client.Client
	store  client.Client // read back without counting
	calls  testutil.Calls
}

func newRouterWorld(t *testing.T, objs ...client.Object) *routerWorld {
	t.Helper()
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = gatewayv1.Install(s)
	_ = v1alpha1.AddToScheme(s)
	store := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).WithStatusSubresource(&gatewayv1.HTTPRoute{}).Build()
	w := &routerWorld{t: t, store: store}
	w.client = w.calls.Wrap(store)
	return w
}

// newRouteWorld is a routerWorld holding existing, podinfo's HTTPRoute
// (none when nil), whose calls fail as fail says.
func newRouteWorld(t *testing.T, existing *gatewayv1.HTTPRoute, fail map[string]error) *routerWorld {
	t.Helper()
	var objs []client.Object
	if existing != nil {
		objs = append(objs, existing)
	}
	w := newRouterWorld(t, objs...)
	w.calls.Fail = fail
	return w
}

// route reads podinfo's HTTPRoute back; nil when there is none.
func (w *routerWorld) route() *gatewayv1.HTTPRoute {
	w.t.Helper()
	route := &gatewayv1.HTTPRoute{}
	err := w.store.Get(context.Background(), client.ObjectKey{Namespace: "apps", Name: "podinfo"}, route)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		w.t.Fatal(err)
	}
	return route
}

// sameError reports whether err is want (both nil, or err wraps want): an
// API error of the same reason, or a refusal of the same object.
func sameError(err, want error) bool {
	if want == nil || err == nil {
		return err == want
	}
	if errors.Is(err, want) {
		return true
	}
	if reason := apierrors.ReasonForError(want); reason != metav1.StatusReasonUnknown {
		return apierrors.ReasonForError(err) == reason
	}
	var got, wanted *workload.NotManagedError
	return errors.As(err, &got) && errors.As(want, &wanted) && got.Error() == wanted.Error()
}

// injected is the error of a call a test made fail.
var injected = apierrors.NewServiceUnavailable("injected fault")

// podinfoCanary is podinfo's Canary (UID uid-podinfo) on the Gateway
// gateways/public for podinfo.example.com.
func podinfoCanary() *v1alpha1.Canary {
	return testobj.MakeCanary("podinfo", "apps").UID("uid-podinfo").Gateway("gateways", "public").Hosts("podinfo.example.com").Obj()
}
