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

package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
	"github.com/serin-dev/serin/internal/testing/testutil"
)

func TestListAPI(t *testing.T) {
	other := testobj.MakeCanary("backend", "shop").Phase(v1alpha1.PhaseSucceeded).Obj()
	kube := newFakeClient(nil, sampleCanary(), other)
	tests := map[string]struct {
		namespace string
		want      []summary
	}{
		"all namespaces": {want: []summary{
			{Namespace: "apps", Name: "podinfo", Phase: "Progressing", Weight: 40, Revision: latestRevision, Ready: "False",
				Message: "analysing revision " + latestRevision,
				Revert:  &revertView{State: "Opened", PullRequestURL: "https://git.example/apps/pulls/7"}},
			{Namespace: "shop", Name: "backend", Phase: "Succeeded", Ready: "Unknown", Message: "waiting to be reconciled"},
		}},
		"one namespace": {namespace: "shop", want: []summary{
			{Namespace: "shop", Name: "backend", Phase: "Succeeded", Ready: "Unknown", Message: "waiting to be reconciled"},
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			server := startServer(t, kube, tc.namespace)
			resp, body := get(t, server, "/api/canaries")
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s: %s", resp.Status, body)
			}
			var got struct{ Canaries []summary }
			if err := json.Unmarshal([]byte(body), &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.Canaries); diff != "" {
				t.Errorf("canaries differ (-want +got):\n%s", diff)
			}
		})
	}
}

// The detail of a Canary: its record read as numbers and series, the
// requests, the conditions, the wave of its promoted revision; a golden
// file, since it is the pages' input.
func TestCanaryAPI(t *testing.T) {
	canary := waveCanary()
	canary.Annotations = map[string]string{v1alpha1.PromoteRequestAnnotation: "2026-05-04T10:14:00Z"}
	canary.Status.HandledRequests.Abort = "2026-05-04T09:00:45Z"
	server := startServer(t, newFakeClient(nil, canary), "")

	resp, body := get(t, server, "/api/canaries/apps/podinfo")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %s", resp.Status, body)
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, []byte(body), "", "  "); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, filepath.Join("testdata", "canary.json"), pretty.String())

	for path, want := range map[string]int{
		"/api/canaries/apps/nope":       http.StatusNotFound,
		"/api/canaries/other/podinfo":   http.StatusNotFound,
		"/api/canaries/apps/podinfo/x/": http.StatusNotFound,
	} {
		if resp, body := get(t, server, path); resp.StatusCode != want {
			t.Errorf("GET %s: %s %s, want %d", path, resp.Status, body, want)
		}
	}
}

func TestPages(t *testing.T) {
	server := startServer(t, newFakeClient(nil), "apps")
	for path, want := range map[string]string{
		"/":                      `<meta name="serin-token" content="test-token">`,
		"/canaries/apps/podinfo": `<meta name="serin-namespace" content="apps">`,
		"/assets/app.js":         "new EventSource(url)",
		"/assets/chart.js":       "createElementNS(SVG",
		"/assets/style.css":      "prefers-color-scheme",
	} {
		resp, body := get(t, server, path)
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("GET %s: %s, body without %q", path, resp.Status, want)
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
			t.Errorf("GET %s: Content-Security-Policy %q", path, csp)
		}
	}
	if resp, _ := get(t, server, "/nope"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /nope: %s", resp.Status)
	}
}

// The list's stream: a snapshot, then a Canary that changes, one that is
// created and one that is deleted, all from the one watch of the hub.
func TestEventStream(t *testing.T) {
	ctx := context.Background()
	kube := newFakeClient(nil, sampleCanary())
	server := startServer(t, kube, "apps")
	events := openEvents(t, server, "")

	var snap struct{ Canaries []summary }
	events.nextNamed(eventSnapshot).decode(t, &snap)
	if len(snap.Canaries) != 1 || snap.Canaries[0].Weight != 40 {
		t.Fatalf("snapshot %+v, want podinfo at weight 40", snap.Canaries)
	}

	canary := &v1alpha1.Canary{}
	if err := kube.Get(ctx, client.ObjectKey{Namespace: "apps", Name: "podinfo"}, canary); err != nil {
		t.Fatal(err)
	}
	canary.Status.CanaryWeight = 60
	if err := kube.Status().Update(ctx, canary); err != nil {
		t.Fatal(err)
	}
	var changed summary
	events.nextNamed(eventCanary).decode(t, &changed)
	if changed.Name != "podinfo" || changed.Weight != 60 {
		t.Errorf("canary event %+v, want podinfo at weight 60", changed)
	}

	if err := kube.Create(ctx, testobj.MakeCanary("backend", "apps").Obj()); err != nil {
		t.Fatal(err)
	}
	// Another namespace's Canary is not this dashboard's.
	if err := kube.Create(ctx, testobj.MakeCanary("elsewhere", "shop").Obj()); err != nil {
		t.Fatal(err)
	}
	var created summary
	events.nextNamed(eventCanary).decode(t, &created)
	if created.Name != "backend" {
		t.Errorf("canary event %+v, want backend", created)
	}

	if err := kube.Delete(ctx, canary); err != nil {
		t.Fatal(err)
	}
	var deleted map[string]string
	events.nextNamed(eventDeleted).decode(t, &deleted)
	if deleted["name"] != "podinfo" || deleted["namespace"] != "apps" {
		t.Errorf("deleted event %v, want apps/podinfo", deleted)
	}
}

// A Canary's stream: its detail at each change, deleted when it goes.
func TestCanaryEventStream(t *testing.T) {
	ctx := context.Background()
	kube := newFakeClient(nil, sampleCanary(), testobj.MakeCanary("backend", "apps").Obj())
	server := startServer(t, kube, "")
	events := openEvents(t, server, "?namespace=apps&name=podinfo")

	var first detail
	events.nextNamed(eventCanary).decode(t, &first)
	if first.Name != "podinfo" || len(first.Rollouts) != 2 || len(first.Rollouts[0].Steps) != 2 {
		t.Fatalf("detail %s with %d rollouts, want podinfo with 2", first.Name, len(first.Rollouts))
	}

	other := &v1alpha1.Canary{}
	if err := kube.Get(ctx, client.ObjectKey{Namespace: "apps", Name: "backend"}, other); err != nil {
		t.Fatal(err)
	}
	other.Status.CanaryWeight = 10
	if err := kube.Status().Update(ctx, other); err != nil {
		t.Fatal(err)
	}
	canary := &v1alpha1.Canary{}
	if err := kube.Get(ctx, client.ObjectKey{Namespace: "apps", Name: "podinfo"}, canary); err != nil {
		t.Fatal(err)
	}
	canary.Status.Analyses[0].Steps = append(canary.Status.Analyses[0].Steps, canary.Status.Analyses[0].Steps[1])
	canary.Status.Analyses[0].Steps[2].Weight = 60
	if err := kube.Status().Update(ctx, canary); err != nil {
		t.Fatal(err)
	}
	var next detail
	events.nextNamed(eventCanary).decode(t, &next)
	if next.Name != "podinfo" || len(next.Rollouts[0].Steps) != 3 || next.Rollouts[0].Steps[2].Weight != 60 {
		t.Errorf("detail after the third step: %s with steps %+v", next.Name, next.Rollouts[0].Steps)
	}

	if err := kube.Delete(ctx, canary); err != nil {
		t.Fatal(err)
	}
	var deleted map[string]string
	events.nextNamed(eventDeleted).decode(t, &deleted)
	if !strings.Contains(deleted["message"], "apps/podinfo does not exist") {
		t.Errorf("deleted event %v", deleted)
	}
}

// forbidden refuses every request as an API server refuses a user
// without the role.
func forbidden() *interceptor.Funcs {
	refuse := func(verb, name string) error {
		return apierrors.NewForbidden(schema.GroupResource{Group: "serin.dev", Resource: "canaries"}, name,
			fmt.Errorf(`User "bob" cannot %s resource "canaries" in API group "serin.dev" in the namespace "apps"`, verb))
	}
	return &interceptor.Funcs{
		Get: func(_ context.Context, _ client.WithWatch, key client.ObjectKey, _ client.Object, _ ...client.GetOption) error {
			return refuse("get", key.Name)
		},
		List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
			return refuse("list", "")
		},
		Watch: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) (watch.Interface, error) {
			return nil, refuse("watch", "")
		},
		Patch: func(_ context.Context, _ client.WithWatch, o client.Object, _ client.Patch, _ ...client.PatchOption) error {
			return refuse("patch", o.GetName())
		},
	}
}

// A user without the role sees why, in the API's answers and the stream,
// and the dashboard keeps running.
func TestForbidden(t *testing.T) {
	const said = `User \"bob\" cannot list resource \"canaries\" in API group \"serin.dev\" in the namespace \"apps\"`
	server := startServer(t, newFakeClient(forbidden(), sampleCanary()), "")

	resp, body := get(t, server, "/api/canaries")
	want := `{"error":"Forbidden: your Kubernetes user may not do this. The dashboard acts with your kubeconfig's permissions only; ` +
		`ask for the role in the dashboard's documentation. To see one namespace, start the dashboard with -n NAMESPACE. ` +
		`The API server said: canaries.serin.dev is forbidden: ` + said + `"}` + "\n"
	if resp.StatusCode != http.StatusForbidden || body != want {
		t.Errorf("GET /api/canaries: %s\n%s\nwant 403 and\n%s", resp.Status, body, want)
	}

	events := openEvents(t, server, "")
	var p map[string]string
	events.nextNamed(eventProblem).decode(t, &p)
	if !strings.HasPrefix(p["error"], "Forbidden: your Kubernetes user may not do this.") || !strings.Contains(p["error"], "-n NAMESPACE") {
		t.Errorf("problem event %q", p["error"])
	}
	if resp, body := get(t, server, "/api/canaries/apps/podinfo"); resp.StatusCode != http.StatusForbidden ||
		!strings.Contains(body, "cannot get resource") || strings.Contains(body, "-n NAMESPACE") {
		t.Errorf("GET a Canary: %s %s", resp.Status, body)
	}
	resp, body = post(t, server, "/api/canaries/apps/podinfo/promote", sameOrigin(server, testToken))
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "Forbidden: your Kubernetes user may not do this.") {
		t.Errorf("POST promote: %s %s", resp.Status, body)
	}
}

// Beyond loopback the dashboard asks every request for its access token:
// without it nothing is read (not the page, whose token acts) and nothing
// is done; the URL the CLI prints trades it for a cookie and a redirect.
func TestAccessToken(t *testing.T) {
	const access = "access-secret"
	s, err := New(newFakeClient(nil, sampleCanary()), Options{Token: testToken, AccessToken: access, Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go s.Run(ctx)
	server := httptest.NewServer(s)
	t.Cleanup(server.Close)

	for _, path := range []string{"/", "/api/canaries", "/?access_token=wrong"} {
		resp, body := get(t, server, path)
		if resp.StatusCode != http.StatusUnauthorized || strings.Contains(body, testToken) {
			t.Errorf("GET %s without the access token: %s %s, want 401 without the page's token", path, resp.Status, body)
		}
	}
	if resp, _ := post(t, server, "/api/canaries/apps/podinfo/promote", sameOrigin(server, testToken)); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("POST promote with the page's token but no access token: %s, want 401", resp.Status)
	}

	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(server.URL + "/?access_token=" + access)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		t.Fatalf("GET with the access token: %s to %q, want 303 to /", resp.Status, resp.Header.Get("Location"))
	}
	cookies := resp.Cookies()
	if len(cookies) != 1 || cookies[0].Value != access || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("cookies %v, want the access token, HttpOnly, SameSite=Strict", cookies)
	}
	req, _ := http.NewRequest(http.MethodGet, server.URL+"/api/canaries", nil)
	req.AddCookie(cookies[0])
	got, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = got.Body.Close()
	if got.StatusCode != http.StatusOK {
		t.Errorf("GET /api/canaries with the cookie: %s, want 200", got.Status)
	}
}
