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

package gitops

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/serin-dev/serin/internal/outbound"
	"github.com/serin-dev/serin/internal/testing/testbed"
)

// helmCharts is HelmCharts reading the HelmRepository charts of
// namespace, at url (of type repoType), from a fake cluster whose scheme,
// like the agent's, does not register source-controller's types; with
// username, its Secret holds basic auth.
func helmCharts(t *testing.T, namespace, url, repoType, username string) *HelmCharts {
	t.Helper()
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	spec := map[string]any{"url": url, "type": repoType}
	objs := []client.Object{}
	if username != "" {
		spec["secretRef"] = map[string]any{"name": "charts-auth"}
		objs = append(objs, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "charts-auth", Namespace: namespace},
			Data: map[string][]byte{"username": []byte(username), "password": []byte("s3cret")}})
	}
	repo := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": sourcev1.GroupVersion.String(), "kind": sourcev1.HelmRepositoryKind,
		"metadata": map[string]any{"name": "charts", "namespace": namespace}, "spec": spec,
	}}
	objs = append(objs, repo)
	return NewHelmCharts(fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build(), HelmChartsOptions{CrossNamespace: true, AllowLoopback: true})
}

// neverReadyChart is the testbed's chart at version whose pods never
// become ready as the primary: a new pod template, from the chart alone.
func neverReadyChart(version string) testbed.Chart {
	c := testbed.PodinfoChart(version)
	c.Files["values.yaml"] = strings.Replace(c.Files["values.yaml"], "podAnnotations: {}",
		fmt.Sprintf("podAnnotations:\n  %s: \"true\"", testbed.NeverReadyAsPrimaryAnnotation), 1)
	return c
}

// startChartRepository serves charts as the testbed's HTTP Helm
// repository.
func startChartRepository(t *testing.T, charts ...testbed.Chart) *testbed.HelmRepository {
	t.Helper()
	repo, err := testbed.StartHelmRepository(charts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(repo.Close)
	return repo
}

// greetingRelease is apps/podinfo's HelmRelease of the chart kept in Git
// (greetingChart), at an image tag and greeting.
func greetingRelease(tag, greeting string) string {
	return `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: podinfo
spec:
  interval: 10m
  chart:
    spec:
      chart: ./charts/podinfo
      sourceRef:
        kind: GitRepository
        name: fleet
  values:
    canary: true
    image:
      tag: ` + tag + `
    greeting: ` + greeting + `
`
}

// greetingChart is the testbed's chart, kept in Git, with a ConfigMap
// that renders the image tag and, with both, the greeting.
func greetingChart(both bool) map[string]string {
	files := map[string]string{}
	for p, c := range testbed.PodinfoChart("0.1.0").Files {
		files["charts/podinfo/"+p] = c
	}
	data := `{{ .Values.image.tag }}`
	if both {
		data += `-{{ .Values.greeting }}`
	}
	files["charts/podinfo/templates/configmap.yaml"] = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-greeting
data:
  greeting: "` + data + `"
`
	return files
}

// addChartFiles adds n files of size bytes under charts/podinfo/big/ of
// files: all the same content when same, else each its own; size 0 adds
// them empty, as a plan deletes them.
func addChartFiles(files map[string]string, n, size int, same bool) map[string]string {
	for i := range n {
		line := "serin-chart-file\n"
		if !same {
			line = fmt.Sprintf("serin-chart-file-%04d\n", i)
		}
		files[fmt.Sprintf("charts/podinfo/big/copy-%04d.txt", i)] = strings.Repeat(line, size/len(line))
	}
	return files
}

// otherSource makes the HelmRelease of files name another GitRepository
// for its chart (platform/charts) than the Kustomization's (apps/fleet).
func otherSource(files map[string]string) map[string]string {
	files["apps/podinfo/helmrelease.yaml"] = strings.Replace(files["apps/podinfo/helmrelease.yaml"], "name: fleet", "name: charts\n        namespace: platform", 1)
	return files
}

// A revert of a HelmRelease's bad revision is verified by rendering its
// chart with Helm at the good commit, the head and the result: the target
// Deployment must render as at the good commit and every other object as
// at the head or at the good commit.
func TestPlanRevert_HelmReleaseRendered(t *testing.T) {
	repo := startChartRepository(t, testbed.PodinfoChart("0.1.0"), neverReadyChart("0.2.0"))
	good := goodHelmFleet()
	kustomization := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: apps\nresources:\n  - helmrelease.yaml\n"
	greeting := func(tag, greeting string, both bool, readme string) map[string]string {
		files := greetingChart(both)
		files["apps/podinfo/kustomization.yaml"] = kustomization
		files["apps/podinfo/helmrelease.yaml"] = greetingRelease(tag, greeting)
		files["README.md"] = readme
		return files
	}
	tests := map[string]struct {
		good, bad map[string]string
		charts    ChartSource
		// want are the planned files; wantErr and errText a refusal.
		want    map[string]string
		notes   []string
		wantErr error
		errText string
	}{
		"a chart version bump of an HTTP Helm repository renders as the good commit once reverted": {
			good: good.files(), bad: with(good, func(f *helmFleet) { f.version, f.interval = "0.2.0", "5m" }).files(),
			charts: helmCharts(t, "apps", repo.URL, "", ""),
			want:   map[string]string{"apps/podinfo/helmrelease.yaml": with(good, func(f *helmFleet) { f.interval = "5m" }).files()["apps/podinfo/helmrelease.yaml"]},
			notes: []string{
				"Not a revert: undoing the change of HelmRelease/apps/podinfo would also change its fields that are not its chart's or values (at spec.interval).",
				"apps/podinfo/helmrelease.yaml: HelmRelease/podinfo spec.chart.spec.version restored.",
				"Verified by rendering the chart of HelmRelease/apps/podinfo with Helm: Deployment/apps/podinfo renders as at %GOOD% (chart podinfo 0.1.0), and every other object of the chart as at %GOOD% or at the head.",
			},
		},
		"a value that renders only another object stays": {
			good: greeting("v1", "hi", false, "one"), bad: greeting("v2", "hello", false, "two"),
			want: map[string]string{"apps/podinfo/helmrelease.yaml": greetingRelease("v1", "hello")},
		},
		"a values revert that would leave another object as no commit rendered it is refused": {
			good: greeting("v1", "hi", true, "one"), bad: greeting("v2", "hello", true, "two"),
			wantErr: ErrUnverifiable,
			errText: "would leave ConfigMap/apps/podinfo-greeting, rendered by its chart, as neither the head nor the good commit",
		},
		"a chart kept in another GitRepository falls back to the chart's inputs, and says why": {
			good: otherSource(greeting("v1", "hi", true, "one")), bad: otherSource(greeting("v2", "hello", true, "two")),
			want: map[string]string{"apps/podinfo/helmrelease.yaml": strings.Replace(greetingRelease("v1", "hi"), "name: fleet", "name: charts\n        namespace: platform", 1)},
			notes: []string{
				"Not a revert: commit %BAD% also changed README.md.",
				"apps/podinfo/helmrelease.yaml: HelmRelease/podinfo spec.values.image.tag restored.",
				"apps/podinfo/helmrelease.yaml: HelmRelease/podinfo spec.values.greeting restored.",
				"Verified by the chart's inputs, not by rendering it: at %GOOD%, the chart is not rendered: " +
					"the chart is in GitRepository platform/charts, not in the Kustomization's repository apps/fleet; serin compared the inputs.",
			},
		},
		"files the bad commit added to a chart in Git, more than are rendered one by one, are reverted with it": {
			good: greeting("v1", "hi", false, "one"), bad: addChartFiles(greeting("v2", "hi", false, "one"), maxInfluenceRenders+6, 1<<10, true),
			want: addChartFiles(map[string]string{"apps/podinfo/helmrelease.yaml": greetingRelease("v1", "hi")}, maxInfluenceRenders+6, 0, true),
		},
		"identical files are read once: a thousand copies of one 1 MiB file are compared, on the chart's inputs past the chart's size bound": {
			good: greeting("v1", "hi", false, "one"), bad: addChartFiles(greeting("v2", "hi", false, "one"), 1000, 1<<20, true),
			want: addChartFiles(map[string]string{"apps/podinfo/helmrelease.yaml": greetingRelease("v1", "hi")}, 1000, 0, true),
			notes: []string{"Verified by the chart's inputs, not by rendering it: at %BAD%, the chart is not rendered: the chart in ./charts/podinfo of HelmRelease/apps/podinfo: " +
				"the chart's rendering went past its size bound of 64 MiB (--chart-render-max-chart-size)."},
		},
		"changed files that take more than the plan reads are refused before they are read": {
			good: greeting("v1", "hi", false, "one"), bad: addChartFiles(greeting("v2", "hi", false, "one"), maxInfluenceRenders+6, 3<<20, false),
			wantErr: ErrUnverifiable,
			errText: "the files the bad commit changed take more than 128 MiB to compare",
		},
		"an OCI HelmRepository falls back to the chart's inputs, and says why": {
			good: good.files(), bad: with(good, func(f *helmFleet) { f.version = "0.2.0" }).files(),
			charts: helmCharts(t, "apps", "oci://registry.example.com/charts", sourcev1.HelmRepositoryTypeOCI, ""),
			want:   map[string]string{"apps/podinfo/helmrelease.yaml": good.files()["apps/podinfo/helmrelease.yaml"]},
			notes: []string{"Verified by the chart's inputs, not by rendering it: at %GOOD%, the chart is not rendered: " +
				"HelmRepository apps/charts is an OCI registry, which serin does not fetch charts from."},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			local := newTestRepo(t)
			goodC := local.commitFiles(tt.good, "Promote podinfo")
			bad := maps.Clone(tt.bad)
			for p := range tt.good {
				if _, ok := bad[p]; !ok {
					bad[p] = ""
				}
			}
			badC := local.commitFiles(bad, "Bump podinfo")
			plan, err := PlanRevert(t.Context(), PlanInput{
				Path: "./apps/podinfo", Target: Target{Kind: "HelmRelease", Namespace: "apps", Name: "podinfo"},
				Rendered: &Target{Kind: "Deployment", Namespace: "apps", Name: "podinfo"}, Charts: tt.charts,
				Good: goodC, Bad: badC, Head: badC, GitRepository: types.NamespacedName{Namespace: "apps", Name: "fleet"},
			})
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.errText) {
					t.Fatalf("err = %v, want %v with %q", err, tt.wantErr, tt.errText)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, f := range plan.Files {
				got[f.Path] = string(f.Content)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("planned files (-want +got):\n%s", diff)
			}
			var notes []string
			for _, n := range tt.notes {
				n = strings.ReplaceAll(n, "%BAD%", ShortSHA(badC.Hash.String()))
				notes = append(notes, strings.ReplaceAll(n, "%GOOD%", ShortSHA(goodC.Hash.String())))
			}
			if tt.notes != nil {
				if diff := cmp.Diff(notes, plan.Notes); diff != "" {
					t.Errorf("notes (-want +got):\n%s", diff)
				}
			} else if n := plan.Notes[len(plan.Notes)-1]; !strings.HasPrefix(n, "Verified by rendering the chart") {
				t.Errorf("last note %q, want the rendering's", n)
			}
		})
	}
}

// The object sets of three renderings: an object is mixed when the result
// has it in a state neither the head nor the good rendering has.
func TestMixedObjects(t *testing.T) {
	k := func(name string) objectKey {
		return objectKey{APIVersion: "v1", Kind: "ConfigMap", Namespace: "apps", Name: name}
	}
	r := func(objects map[objectKey]string) *chartRendering { return &chartRendering{objects: objects} }
	head := r(map[objectKey]string{k("a"): "head", k("b"): "same", k("new"): "x"})
	good := r(map[objectKey]string{k("a"): "good", k("b"): "same", k("old"): "y"})
	tests := map[string]struct {
		result *chartRendering
		want   []string
	}{
		"as at the head":              {result: head},
		"as at the good commit":       {result: good},
		"each as one of them":         {result: r(map[objectKey]string{k("a"): "good", k("b"): "same", k("new"): "x"})},
		"content of no commit":        {result: r(map[objectKey]string{k("a"): "mixed", k("b"): "same"}), want: []string{"ConfigMap/apps/a"}},
		"an object no commit renders": {result: r(map[objectKey]string{k("a"): "head", k("b"): "same", k("c"): "z"}), want: []string{"ConfigMap/apps/c"}},
		"an object both render, gone": {result: r(map[objectKey]string{k("a"): "head"}), want: []string{"ConfigMap/apps/b"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, mixedObjects(tt.result, head, good)); diff != "" {
				t.Error(diff)
			}
		})
	}
}

// helm-controller's release name: spec.releaseName, else
// [targetNamespace-]name, shortened past 53 characters.
func TestHelmReleaseName(t *testing.T) {
	long := strings.Repeat("a", 60)
	tests := map[string]struct {
		name, releaseName, targetNamespace string
		want                               string
	}{
		"the name":                {name: "podinfo", want: "podinfo"},
		"target namespace first":  {name: "podinfo", targetNamespace: "apps", want: "apps-podinfo"},
		"the release name wins":   {name: "podinfo", releaseName: "web", targetNamespace: "apps", want: "web"},
		"shortened with its hash": {name: long, want: strings.Repeat("a", 40) + "-" + fmt.Sprintf("%x", sha256.Sum256([]byte(long)))[:12]},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var hr helmReleaseSpec
			hr.Metadata.Name, hr.Spec.ReleaseName, hr.Spec.TargetNamespace = tt.name, tt.releaseName, tt.targetNamespace
			if got := hr.releaseName(); got != tt.want {
				t.Errorf("release name %q, want %q", got, tt.want)
			}
		})
	}
}

// authLog records the Authorization header of each request a server got,
// by path.
type authLog struct {
	mu   sync.Mutex
	seen map[string]string
}

func (l *authLog) record(r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen[r.URL.Path] = r.Header.Get("Authorization")
}

func (l *authLog) get() map[string]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.seen)
}

// A HelmRepository's basic auth goes to its own host only: the index and
// a package on that host get it; a package listed on another host gets
// none, and a redirect to another host is refused. Packages are kept by
// URL and digest: a second fetch downloads nothing.
func TestHelmCharts_CredentialsOnlyToTheRepositoryHost(t *testing.T) {
	tgz, err := testbed.PodinfoChart("0.1.0").Package()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(tgz)
	digest := hex.EncodeToString(sum[:])
	otherLog := &authLog{seen: map[string]string{}}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherLog.record(r)
		_, _ = w.Write(tgz)
	}))
	t.Cleanup(other.Close)
	repoLog := &authLog{seen: map[string]string{}}
	downloads := 0
	var repoURL string
	repo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		repoLog.record(r)
		switch r.URL.Path {
		case "/index.yaml":
			fmt.Fprintf(w, "apiVersion: v1\nentries:\n  podinfo:\n"+
				"  - {version: 0.1.0, digest: %s, urls: [podinfo-0.1.0.tgz]}\n"+
				"  - {version: 0.2.0, digest: %s, urls: [%s/elsewhere/podinfo-0.2.0.tgz]}\n"+
				"  - {version: 0.3.0, digest: %s, urls: [%s/redirect/podinfo-0.3.0.tgz]}\n",
				digest, digest, other.URL, digest, repoURL)
		case "/podinfo-0.1.0.tgz":
			downloads++
			_, _ = w.Write(tgz)
		case "/redirect/podinfo-0.3.0.tgz":
			http.Redirect(w, r, other.URL+"/redirected/podinfo-0.3.0.tgz", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(repo.Close)
	repoURL = repo.URL
	charts := helmCharts(t, "apps", repo.URL, "", "fleet")
	_, err = charts.HelmRepositoryChart(t.Context(), "apps", types.NamespacedName{Namespace: "apps", Name: "charts"}, "podinfo", "0.3.0")
	wantErr := "GET " + repo.URL + "/redirect/podinfo-0.3.0.tgz: the server redirected to another host or scheme, which serin does not follow for a chart (to " + other.URL + "/redirected/podinfo-0.3.0.tgz)"
	if err == nil || err.Error() != wantErr {
		t.Errorf("redirected: err = %v, want %q", err, wantErr)
	}
	for _, version := range []string{"0.1.0", "0.1.0", "0.2.0"} {
		got, err := charts.HelmRepositoryChart(t.Context(), "apps", types.NamespacedName{Namespace: "apps", Name: "charts"}, "podinfo", version)
		if err != nil {
			t.Fatalf("%s: %v", version, err)
		}
		if !bytes.Equal(got, tgz) {
			t.Fatalf("%s: not the package", version)
		}
	}
	if downloads != 1 {
		t.Errorf("podinfo 0.1.0 downloaded %d times, want 1 (then from memory)", downloads)
	}
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("fleet:s3cret"))
	wantRepo := map[string]string{"/index.yaml": basic, "/podinfo-0.1.0.tgz": basic, "/redirect/podinfo-0.3.0.tgz": basic}
	if diff := cmp.Diff(wantRepo, repoLog.get()); diff != "" {
		t.Errorf("the repository's host (-want +got):\n%s", diff)
	}
	wantOther := map[string]string{"/elsewhere/podinfo-0.2.0.tgz": ""}
	if diff := cmp.Diff(wantOther, otherLog.get()); diff != "" {
		t.Errorf("another host (-want +got):\n%s", diff)
	}
}

// The caches of index lookups and packages are keyed by the credentials
// that filled them: tenant B's HelmRepository at tenant A's private URL,
// without A's Secret, is refused by the server (401), although A's
// render fetched the same chart a moment before.
func TestHelmCharts_CachesKeyedByCredentials(t *testing.T) {
	tgz, err := testbed.PodinfoChart("0.1.0").Package()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(tgz)
	repo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "team-a" || p != "s3cret" {
			http.Error(w, "private", http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/index.yaml":
			fmt.Fprintf(w, "apiVersion: v1\nentries:\n  podinfo:\n  - {version: 0.1.0, digest: %x, urls: [podinfo-0.1.0.tgz]}\n", sum)
		case "/podinfo-0.1.0.tgz":
			_, _ = w.Write(tgz)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(repo.Close)
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	helmRepo := func(namespace string, secret bool) client.Object {
		spec := map[string]any{"url": repo.URL}
		if secret {
			spec["secretRef"] = map[string]any{"name": "charts-auth"}
		}
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": sourcev1.GroupVersion.String(), "kind": sourcev1.HelmRepositoryKind,
			"metadata": map[string]any{"name": "charts", "namespace": namespace}, "spec": spec,
		}}
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		helmRepo("team-a", true), helmRepo("team-b", false),
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "charts-auth", Namespace: "team-a"},
			Data: map[string][]byte{"username": []byte("team-a"), "password": []byte("s3cret")}},
	).Build()
	charts := NewHelmCharts(c, HelmChartsOptions{AllowLoopback: true})
	got, err := charts.HelmRepositoryChart(t.Context(), "team-a", types.NamespacedName{Namespace: "team-a", Name: "charts"}, "podinfo", "0.1.0")
	if err != nil || !bytes.Equal(got, tgz) {
		t.Fatalf("team-a: %v", err)
	}
	_, err = charts.HelmRepositoryChart(t.Context(), "team-b", types.NamespacedName{Namespace: "team-b", Name: "charts"}, "podinfo", "0.1.0")
	want := "GET " + repo.URL + "/index.yaml: 401 Unauthorized"
	if err == nil || err.Error() != want {
		t.Fatalf("team-b: err = %v, want %q", err, want)
	}
}

// A HelmRepository at a loopback, link-local or metadata address is not
// called, unless loopback is allowed (--chart-fetch-allow-loopback).
func TestHelmCharts_RefusesLocalAddresses(t *testing.T) {
	called := false
	repo := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called = true }))
	t.Cleanup(repo.Close)
	for url, want := range map[string]string{
		repo.URL:                  "serin does not connect to 127.0.0.1 (a loopback, link-local or metadata address) on a tenant's behalf",
		"http://169.254.169.254/": "serin does not connect to 169.254.169.254 (a loopback, link-local or metadata address) on a tenant's behalf",
	} {
		c := helmCharts(t, "apps", url, "", "")
		c.http = outbound.NewClient(outbound.Options{Timeout: chartFetchTimeout, RefuseLocal: true})
		_, err := c.HelmRepositoryChart(t.Context(), "apps", types.NamespacedName{Namespace: "apps", Name: "charts"}, "podinfo", "0.1.0")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", url, err, want)
		}
	}
	if called {
		t.Error("the loopback repository was called")
	}
}

// A package over the bound is refused, with or without a Content-Length,
// and so is one that does not match the index's digest.
func TestHelmCharts_RefusesWhatItCannotTrust(t *testing.T) {
	huge := bytes.Repeat([]byte{0}, int(DefaultMaxChartSize)+1)
	repo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/index.yaml":
			fmt.Fprint(w, "apiVersion: v1\nentries:\n  podinfo:\n"+
				"  - {version: 0.1.0, urls: [huge.tgz]}\n"+
				"  - {version: 0.2.0, urls: [chunked.tgz]}\n"+
				"  - {version: 0.3.0, digest: 0000, urls: [small.tgz]}\n")
		case "/huge.tgz":
			_, _ = w.Write(huge)
		case "/chunked.tgz":
			for i := 0; i < len(huge); i += 1 << 20 {
				_, _ = w.Write(huge[i:min(i+1<<20, len(huge))])
				w.(http.Flusher).Flush()
			}
		case "/small.tgz":
			_, _ = w.Write([]byte("small"))
		}
	}))
	t.Cleanup(repo.Close)
	charts := helmCharts(t, "apps", repo.URL, "", "")
	for version, want := range map[string]string{"0.1.0": "larger than the limit", "0.2.0": "larger than the limit", "0.3.0": "does not match the digest"} {
		_, err := charts.HelmRepositoryChart(t.Context(), "apps", types.NamespacedName{Namespace: "apps", Name: "charts"}, "podinfo", version)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", version, err, want)
		}
	}
}

// A wave into the next stage's HelmRelease of an HTTP Helm repository is
// verified by rendering its chart before and after: the same objects, and
// the target runs the images the stage promoted.
func TestPlanPromotion_HelmReleaseRendered(t *testing.T) {
	extra := testbed.PodinfoChart("0.3.0")
	extra.Files["templates/extra.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-extra\n"
	repo := startChartRepository(t, testbed.PodinfoChart("0.1.0"), testbed.PodinfoChart("0.2.0"), extra)
	kustomization := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: production\nresources:\n  - helmrelease.yaml\n"
	tests := map[string]struct {
		promotion *HelmPromotion
		images    []string
		charts    ChartSource
		note      string
		errText   string
	}{
		"the promoted chart renders the same objects, with the promoted image": {
			promotion: &HelmPromotion{Name: "podinfo", Version: "0.2.0", Image: map[string]string{"tag": "v2"}}, images: []string{"podinfo:v2"},
			charts: helmCharts(t, "production", repo.URL, "", ""),
			note:   "Verified by rendering the chart of HelmRelease/production/podinfo with Helm: chart podinfo 0.2.0 renders the same objects as chart podinfo 0.1.0 did, and Deployment/production/podinfo runs podinfo:v2.",
		},
		"an image other than the one staging verified is refused": {
			promotion: &HelmPromotion{Name: "podinfo", Version: "0.2.0", Image: map[string]string{"tag": "v2"}}, images: []string{"podinfo:v3"},
			charts:  helmCharts(t, "production", repo.URL, "", ""),
			errText: "renders Deployment/production/podinfo with podinfo:v2, not the promoted podinfo:v3",
		},
		"a chart that renders another object is refused": {
			promotion: &HelmPromotion{Name: "podinfo", Version: "0.3.0", Image: map[string]string{"tag": "v2"}}, images: []string{"podinfo:v2"},
			charts:  helmCharts(t, "production", repo.URL, "", ""),
			errText: "would render other objects (added: ConfigMap/production/podinfo-extra; removed: none)",
		},
		"an OCI repository is verified by the HelmRelease's fields, and says why": {
			promotion: &HelmPromotion{Name: "podinfo", Version: "0.2.0", Image: map[string]string{"tag": "v2"}}, images: []string{"podinfo:v2"},
			charts: helmCharts(t, "production", "oci://registry.example.com/charts", sourcev1.HelmRepositoryTypeOCI, ""),
			note: "Verified by the fields of HelmRelease/production/podinfo, not by rendering its chart: the chart is not rendered: " +
				"HelmRepository production/charts is an OCI registry, which serin does not fetch charts from.",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			local := newTestRepo(t)
			head := local.commitFiles(map[string]string{
				"production/kustomization.yaml": kustomization,
				"production/helmrelease.yaml":   productionHelmRelease("0.1.0", "    image:\n      tag: v1\n", ""),
			}, "production")
			plan, err := PlanPromotion(t.Context(), PromotionInput{
				Head: head, Path: "./production", Target: Target{Kind: "Deployment", Namespace: "production", Name: "podinfo"},
				Images: tt.images, HelmRelease: tt.promotion, Charts: tt.charts,
			})
			if tt.errText != "" {
				if !errors.Is(err, ErrUnverifiable) || !strings.Contains(err.Error(), tt.errText) {
					t.Fatalf("err = %v, want %q", err, tt.errText)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n := plan.Notes[len(plan.Notes)-1]; n != tt.note {
				t.Errorf("last note\n%s\nwant\n%s", n, tt.note)
			}
		})
	}
}
