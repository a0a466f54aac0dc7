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

// These tests check the commit-status Provider types (github, gitlab,
// gitea) of direct mode. GitHub and GitLab cannot run here, so the wire
// format (method, path, headers, JSON body) is checked by an HTTP server
// standing in for their REST APIs, against the requests their API
// documentation describes; Gitea is exercised for real by the project's
// end-to-end tests, elsewhere. What the statuses must look like is a
// contract: another part of serin reads them back (context
// serin/<namespace>/<canary>, state from the phase).

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	notificationv1 "github.com/fluxcd/notification-controller/api/v1beta3"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// testSHA is the commit of testRevision.
const testSHA = "0123456789abcdef0123456789abcdef01234567"

// testToken is the commit-status Providers' API token.
const testToken = "t0k3n-s3cr3t"

// commitStatusProvider is a Provider of type typ whose address is
// address and whose Secret holds testToken.
func commitStatusProvider(typ, address string) *notificationv1.Provider {
	return provider(typ, typ, withSecret(typ+"-token"), func(p *notificationv1.Provider) { p.Spec.Address = address })
}

// postCommitStatus delivers e to a Provider of type typ whose address is
// the sink's URL with path repo, and returns whether the delivery
// succeeded and what the sink received.
func postCommitStatus(t *testing.T, typ, repo string, e Event) (bool, []received) {
	t.Helper()
	s := newSink(t, func(int) int { return http.StatusCreated })
	b := testBridge(t, Options{Mode: ModeDirect, Reader: fakeReader(t, commitStatusProvider(typ, s.URL+repo),
		secret(typ+"-token", map[string]string{"token": testToken}))})
	canary := withAlerts(testCanary(), alertFor(typ, "info"))
	ok := deliverNow(b, canary, e)
	if !IsVerdict(e) {
		return ok, s.got()
	}
	// A verdict's status is the Canary's to deliver (kept in its status
	// until it arrives): the queue posts none of it.
	if got := s.got(); len(got) != 0 {
		t.Errorf("the queue posted a verdict's commit status: %+v", got)
	}
	providers := b.CommitStatusProviders(canary, e)
	for _, p := range providers {
		if err := b.DeliverCommitStatus(context.Background(), canary, p, e, testTime); err != nil {
			t.Logf("DeliverCommitStatus(%s) = %v", p, err)
			ok = false
		}
	}
	return ok && len(providers) == 1, s.got()
}

// phaseChange is the event of a Canary entering phase, with a message.
func phaseChange(phase v1alpha1.CanaryPhase, severity Severity, msg string) Event {
	return Event{Severity: severity, Reason: string(phase), Message: msg, Phase: phase, Revision: testRevision}
}

func TestCommitStatusWireFormat(t *testing.T) {
	long := strings.Repeat("é", 150)
	tests := map[string]struct {
		typ, repo string
		event     Event
		// uri is the request target, escapes kept.
		uri string
		// header holds the headers that matter, "" for absent.
		header map[string]string
		body   string
	}{
		"github: success": {
			typ: notificationv1.GitHubProvider, repo: "/acme/podinfo", event: promoted(),
			uri: "/api/v3/repos/acme/podinfo/statuses/" + testSHA,
			header: map[string]string{"Authorization": "Bearer " + testToken, "Accept": "application/vnd.github+json",
				"Private-Token": "", "Content-Type": "application/json"},
			body: `{"state": "success",
				"description": "Canary analysis completed successfully, promotion finished (revision ` + testRevision + `)",
				"context": "serin/apps/podinfo"}`,
		},
		"github: halted is a failure": {
			typ: notificationv1.GitHubProvider, repo: "/acme/podinfo.git", event: halted(),
			uri: "/api/v3/repos/acme/podinfo/statuses/" + testSHA,
			header: map[string]string{"Authorization": "Bearer " + testToken, "Accept": "application/vnd.github+json",
				"Private-Token": "", "Content-Type": "application/json"},
			body: `{"state": "failure",
				"description": "promotion halted, routing frozen and canary kept serving: primary not ready",
				"context": "serin/apps/podinfo"}`,
		},
		"gitlab: group path, failed": {
			typ: notificationv1.GitLabProvider, repo: "/platform/apps/podinfo.git",
			event: phaseChange(v1alpha1.PhaseFailed, SeverityError, "canary podinfo rolled back: 2 failed checks"),
			uri:   "/api/v4/projects/platform%2Fapps%2Fpodinfo/statuses/" + testSHA,
			header: map[string]string{"Private-Token": testToken, "Authorization": "", "Accept": "",
				"Content-Type": "application/json"},
			body: `{"state": "failed", "name": "serin/apps/podinfo",
				"description": "canary podinfo rolled back: 2 failed checks"}`,
		},
		"gitlab: success": {
			typ: notificationv1.GitLabProvider, repo: "/acme/podinfo", event: promoted(),
			uri: "/api/v4/projects/acme%2Fpodinfo/statuses/" + testSHA,
			header: map[string]string{"Private-Token": testToken, "Authorization": "", "Accept": "",
				"Content-Type": "application/json"},
			body: `{"state": "success", "name": "serin/apps/podinfo",
				"description": "Canary analysis completed successfully, promotion finished (revision ` + testRevision + `)"}`,
		},
		"gitea: pending, long description cut": {
			typ: notificationv1.GiteaProvider, repo: "/acme/podinfo.git",
			event: phaseChange(v1alpha1.PhaseProgressing, SeverityInfo, long),
			uri:   "/api/v1/repos/acme/podinfo/statuses/" + testSHA,
			header: map[string]string{"Authorization": "token " + testToken, "Private-Token": "", "Accept": "",
				"Content-Type": "application/json"},
			body: `{"state": "pending", "description": "` + strings.Repeat("é", 139) + `…", "context": "serin/apps/podinfo"}`,
		},
		"gitea: halted is a failure": {
			typ: notificationv1.GiteaProvider, repo: "/acme/podinfo", event: halted(),
			uri: "/api/v1/repos/acme/podinfo/statuses/" + testSHA,
			header: map[string]string{"Authorization": "token " + testToken, "Private-Token": "", "Accept": "",
				"Content-Type": "application/json"},
			body: `{"state": "failure",
				"description": "promotion halted, routing frozen and canary kept serving: primary not ready",
				"context": "serin/apps/podinfo"}`,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			ok, got := postCommitStatus(t, tt.typ, tt.repo, tt.event)
			if !ok {
				t.Fatal("delivery failed")
			}
			r := onlyRequest(t, got)
			if r.uri != tt.uri {
				t.Errorf("request target = %s, want %s", r.uri, tt.uri)
			}
			for k, want := range tt.header {
				if got := r.header.Get(k); got != want {
					t.Errorf("header %s = %q, want %q", k, got, want)
				}
			}
			if diff := cmp.Diff(compact(t, tt.body), string(r.body)); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCommitStatusSkips: only phase changes about a Git commit set a
// status; the other events are delivered without a request, and are no
// failure.
func TestCommitStatusSkips(t *testing.T) {
	newRevision := Event{Severity: SeverityInfo, Reason: v1alpha1.NewRevisionReason, Message: "new revision 5f7c of podinfo detected",
		Phase: v1alpha1.PhaseSucceeded, Revision: testRevision, Final: true}
	weight := Event{Severity: SeverityInfo, Reason: v1alpha1.WeightIncreasedReason, Message: "advance podinfo canary weight 20",
		Phase: v1alpha1.PhaseProgressing, Revision: testRevision, Weight: 20, Progress: true}
	checkFailed := Event{Severity: SeverityWarn, Reason: v1alpha1.CheckFailedReason, Message: "request-success-rate 80 (min 99)",
		Phase: v1alpha1.PhaseProgressing, Revision: testRevision, Weight: 20}
	noRevision := promoted()
	noRevision.Revision = ""
	ociDigest := promoted()
	ociDigest.Revision = "latest@sha256:8d1ecf8d6a8c3e5a1b2f1c5e7b7c1f4f9c2d1b0a3e4f5a6b7c8d9e0f1a2b3c4d"
	noPhase := promoted()
	noPhase.Phase = ""

	events := map[string]Event{
		"NewRevision while Succeeded": newRevision,
		"weight step":                 weight,
		"failed check":                checkFailed,
		"no revision":                 noRevision,
		"OCI revision":                ociDigest,
		"no phase":                    noPhase,
	}
	for _, typ := range []string{notificationv1.GitHubProvider, notificationv1.GitLabProvider, notificationv1.GiteaProvider} {
		for name, e := range events {
			t.Run(typ+"/"+name, func(t *testing.T) {
				ok, got := postCommitStatus(t, typ, "/acme/podinfo", e)
				if !ok {
					t.Error("a skipped event failed its delivery")
				}
				if len(got) != 0 {
					t.Errorf("the host received %d requests, want none", len(got))
				}
			})
		}
	}
}

// TestCommitStatusNoToken: a Provider without a token fails the events it
// would post, with an error naming the missing key, and still skips the
// others without an error.
func TestCommitStatusNoToken(t *testing.T) {
	for _, typ := range []string{notificationv1.GitHubProvider, notificationv1.GitLabProvider, notificationv1.GiteaProvider} {
		t.Run(typ, func(t *testing.T) {
			s := newSink(t, nil)
			p := provider("p", typ, func(p *notificationv1.Provider) { p.Spec.Address = s.URL + "/acme/podinfo" })
			b := testBridge(t, Options{Mode: ModeDirect, Reader: fakeReader(t, p)})
			key := types.NamespacedName{Namespace: "flux-system", Name: "p"}
			send := func(e Event) error {
				return b.sendToProvider(context.Background(), testCanary(), key,
					eventFields{canary: testCanary(), event: e, revision: e.Revision, at: testTime}.providerEvent("serin", "x"), anyProvider)
			}
			err := send(promoted())
			if err == nil || !strings.Contains(err.Error(), "'token'") {
				t.Errorf("sendToProvider() = %v, want an error naming the token key", err)
			}
			weight := Event{Severity: SeverityInfo, Reason: v1alpha1.WeightIncreasedReason, Phase: v1alpha1.PhaseProgressing,
				Revision: testRevision, Weight: 20, Progress: true}
			if err := send(weight); err != nil {
				t.Errorf("sendToProvider(progress event) = %v, want it skipped", err)
			}
			if n := len(s.got()); n != 0 {
				t.Errorf("the host received %d requests, want none", n)
			}
		})
	}
}

// TestCommitStatusErrorsHideToken: a host that quotes the token in its
// answer does not get it into the logged error.
func TestCommitStatusErrorsHideToken(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte("bad credentials: " + r.Header.Get("Authorization") + r.Header.Get("Private-Token")))
	}))
	t.Cleanup(srv.Close)
	for _, typ := range []string{notificationv1.GitHubProvider, notificationv1.GitLabProvider, notificationv1.GiteaProvider} {
		t.Run(typ, func(t *testing.T) {
			b := testBridge(t, Options{Mode: ModeDirect, Reader: fakeReader(t, commitStatusProvider(typ, srv.URL+"/acme/podinfo"),
				secret(typ+"-token", map[string]string{"token": testToken}))})
			err := b.sendToProvider(context.Background(), testCanary(), types.NamespacedName{Namespace: "flux-system", Name: typ},
				eventFields{canary: testCanary(), event: promoted(), revision: testRevision, at: testTime}.providerEvent("serin", "x"), anyProvider)
			if err == nil || !strings.Contains(err.Error(), "401") {
				t.Fatalf("sendToProvider() = %v, want a 401 error", err)
			}
			if strings.Contains(err.Error(), testToken) {
				t.Errorf("error reveals the token: %v", err)
			}
		})
	}
}

// TestCommitStatusAddresses: the API each address leads to, for the
// addresses notification-controller takes (web and clone URLs).
func TestCommitStatusAddresses(t *testing.T) {
	tests := map[string]struct {
		typ, address string
		// url is the request's; empty when the address is refused.
		url string
	}{
		"github.com": {typ: notificationv1.GitHubProvider, address: "https://github.com/acme/podinfo",
			url: "https://api.github.com/repos/acme/podinfo/statuses/" + testSHA},
		"github.com clone URL": {typ: notificationv1.GitHubProvider, address: "https://GitHub.com/acme/podinfo.git",
			url: "https://api.github.com/repos/acme/podinfo/statuses/" + testSHA},
		"github.com over ssh": {typ: notificationv1.GitHubProvider, address: "ssh://git@github.com/acme/podinfo.git",
			url: "https://api.github.com/repos/acme/podinfo/statuses/" + testSHA},
		"GitHub Enterprise": {typ: notificationv1.GitHubProvider, address: "https://ghe.example.com:8443/acme/podinfo/",
			url: "https://ghe.example.com:8443/api/v3/repos/acme/podinfo/statuses/" + testSHA},
		"github: a group path": {typ: notificationv1.GitHubProvider, address: "https://github.com/acme/team/podinfo"},
		"github: no owner":     {typ: notificationv1.GitHubProvider, address: "https://github.com/podinfo"},
		"gitlab.com subgroup": {typ: notificationv1.GitLabProvider, address: "https://gitlab.com/group/sub/repo",
			url: "https://gitlab.com/api/v4/projects/group%2Fsub%2Frepo/statuses/" + testSHA},
		"gitlab over ssh": {typ: notificationv1.GitLabProvider, address: "ssh://git@gitlab.example:2222/group/repo.git",
			url: "https://gitlab.example/api/v4/projects/group%2Frepo/statuses/" + testSHA},
		"gitea clone URL": {typ: notificationv1.GiteaProvider, address: "http://gitea.example:3000/owner/repo.git",
			url: "http://gitea.example:3000/api/v1/repos/owner/repo/statuses/" + testSHA},
		"gitea: a group path":   {typ: notificationv1.GiteaProvider, address: "http://gitea.example:3000/a/b/repo"},
		"gitea: another scheme": {typ: notificationv1.GiteaProvider, address: "ftp://gitea.example/owner/repo"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			req, err := formatters[tt.typ](providerConfig{typ: tt.typ, address: tt.address, token: testToken}, promotedProviderEvent())
			if tt.url == "" {
				if err == nil {
					t.Errorf("address %s gave %s, want an error", tt.address, req.url)
				}
				return
			}
			if err != nil {
				t.Fatalf("address %s: %v", tt.address, err)
			}
			if req.url != tt.url {
				t.Errorf("address %s posts to %s, want %s", tt.address, req.url, tt.url)
			}
		})
	}
}

func TestCommitState(t *testing.T) {
	tests := map[v1alpha1.CanaryPhase]struct{ state, gitlab string }{
		v1alpha1.PhaseSucceeded:        {"success", "success"},
		v1alpha1.PhaseFailed:           {"failure", "failed"},
		v1alpha1.PhaseHalted:           {"failure", "failed"},
		v1alpha1.PhaseWaiting:          {"pending", "pending"},
		v1alpha1.PhaseProgressing:      {"pending", "pending"},
		v1alpha1.PhaseWaitingPromotion: {"pending", "pending"},
		v1alpha1.PhasePromoting:        {"pending", "pending"},
		v1alpha1.PhaseFinalising:       {"pending", "pending"},
	}
	for phase, want := range tests {
		got, ok := commitState(phase)
		if !ok || got != want.state || gitlabState(got) != want.gitlab {
			t.Errorf("phase %s: state %s (GitLab %s), want %s (GitLab %s)", phase, got, gitlabState(got), want.state, want.gitlab)
		}
	}
	// Only a completed analysis vouches for a commit: adopting a target
	// analyses nothing, and posts nothing.
	for _, phase := range []v1alpha1.CanaryPhase{v1alpha1.PhaseInitializing, v1alpha1.PhaseInitialized} {
		if got, ok := commitState(phase); ok {
			t.Errorf("phase %s posts %q, want no status", phase, got)
		}
	}
}

func TestCommitOf(t *testing.T) {
	tests := map[string]string{
		"main@sha1:" + testSHA:            testSHA,
		"sha1:" + testSHA:                 testSHA,
		"refs/heads/main@sha1:" + testSHA: testSHA,
		"sha1:abc1234":                    "abc1234",
		"":                                "",
		"main@sha1:":                      "",
		"main@sha1:not-hex":               "",
		"latest@sha256:" + testSHA:        "",
		"main/" + testSHA:                 "",
	}
	for revision, want := range tests {
		got, ok := commitOf(revision)
		if got != want || ok != (want != "") {
			t.Errorf("commitOf(%q) = %q, %v, want %q", revision, got, ok, want)
		}
	}
}

func TestTruncate(t *testing.T) {
	tests := map[string]struct {
		in, want string
	}{
		"short":         {in: "promoted", want: "promoted"},
		"at the limit":  {in: strings.Repeat("a", 140), want: strings.Repeat("a", 140)},
		"one over":      {in: strings.Repeat("a", 141), want: strings.Repeat("a", 139) + "…"},
		"multibyte cut": {in: strings.Repeat("日本", 100), want: strings.Repeat("日本", 69) + "日…"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got := truncate(tt.in, maxDescription)
			if got != tt.want {
				t.Errorf("truncate() = %q, want %q", got, tt.want)
			}
			if n := utf8.RuneCountInString(got); n > maxDescription || !utf8.ValidString(got) {
				t.Errorf("truncate() gave %d characters (valid UTF-8: %v)", n, utf8.ValidString(got))
			}
		})
	}
}

// GitLab refuses a state a commit already has ("Cannot transition status
// via :enqueue from :pending"): serin posts pending at each phase change
// of a rollout, and that answer is a delivery, not a failure; any other
// 400 is one.
func TestGitLabAcceptsARepeatedState(t *testing.T) {
	for body, wantErr := range map[string]bool{
		`{"message":"Cannot transition status via :enqueue from :pending (Reason(s): Status cannot transition via \"enqueue\")"}`: false,
		`{"message":"name is invalid"}`: true,
	} {
		rec := httptest.NewRecorder()
		rec.WriteHeader(http.StatusBadRequest)
		_, _ = rec.WriteString(body)
		if err := gitlabAccepted(rec.Result()); (err != nil) != wantErr {
			t.Errorf("400 %s: err = %v, want an error %v", body, err, wantErr)
		}
	}
}

// The context carries the agent's cluster name when it has one: two
// clusters that apply one path set two statuses on its commit, and a
// wave reads the one of the cluster it names.
func TestCommitStatusContextCarriesTheCluster(t *testing.T) {
	for cluster, want := range map[string]string{"": "serin/apps/podinfo", "prod-eu": "serin/prod-eu/apps/podinfo"} {
		req, err := githubRequest(providerConfig{typ: "github", address: "https://github.com/org/fleet", token: testToken, cluster: cluster}, promotedProviderEvent())
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(req.body), `"context":"`+want+`"`) {
			t.Errorf("cluster %q: body %s, want context %s", cluster, req.body, want)
		}
	}
}
