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
	"context"
	"net"
	"strings"
	"testing"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// secretReason is a Stalled message as a failed webhook writes it: the
// URLs it names carry credentials, and a token of GitHub's form is
// quoted bare.
const secretReason = `rolled back: webhook "gate" failed: Post "https://user:SECRET@hooks.example/gate?token=SECRET123": ` +
	`connection refused; see https://git.example/token/SECRETPATH/x with ghp_SECRETSECRETSECRET`

// noSecret fails the test when s holds any of the secrets above.
func noSecret(t *testing.T, what, s string) {
	t.Helper()
	if strings.Contains(s, "SECRET") {
		t.Errorf("%s holds a secret:\n%s", what, s)
	}
}

// The message template's output is redacted before it is committed:
// URLs lose their userinfo, query values and path tokens; the trailers
// are intact.
func TestRenderMessage_RedactsURLs(t *testing.T) {
	tmpl, err := ParseMessageTemplate("")
	if err != nil {
		t.Fatal(err)
	}
	msg, err := renderMessage(tmpl, MessageData{
		Canary: "podinfo", Namespace: "apps", Phase: "Halted", Target: "Deployment/podinfo",
		BadRevision: "main@sha1:" + strings.Repeat("b", 40), GoodRevision: "main@sha1:" + strings.Repeat("a", 40),
		BadCommit: strings.Repeat("b", 40), GoodCommit: strings.Repeat("a", 40),
		Reason: secretReason,
		Notes:  []string{"member api of the release is applied from https://x-access-token:SECRET@github.com/o/r.git?ref=SECRET (branch main)"},
	}, strings.Repeat("b", 40))
	if err != nil {
		t.Fatal(err)
	}
	noSecret(t, "the commit message", msg)
	for _, want := range []string{
		`Post "https://redacted@hooks.example/gate?token=redacted"`,
		"https://git.example/token/redacted/x with redacted",
		"https://redacted@github.com/o/r.git?ref=redacted (branch main)",
		"Serin-Canary: apps/podinfo\nSerin-Reverts: " + strings.Repeat("b", 40) + "\n",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the message does not say %q:\n%s", want, msg)
		}
	}
}

// A revert whose reason names URLs with credentials commits and
// proposes it redacted: the commit message in Git, the pull request's
// title and body.
func TestGitReverter_NoSecretInCommitOrPullRequest(t *testing.T) {
	f := newGitFixture(t)
	req := f.request(v1alpha1.PullRequestRevert)
	req.Reason = secretReason
	res, err := f.reverter().Revert(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.host.prs) != 1 {
		t.Fatalf("pull requests %d, want 1", len(f.host.prs))
	}
	pr := f.host.prs[0]
	noSecret(t, "the pull request's title", pr.title)
	noSecret(t, "the pull request's body", pr.body)
	if !strings.Contains(pr.body, "https://redacted@hooks.example/gate?token=redacted") {
		t.Errorf("the pull request's body does not name the webhook, redacted:\n%s", pr.body)
	}
	_, commit := f.file(res.Branch, "apps/podinfo/kustomization.yaml")
	noSecret(t, "the commit message", commit.Message)
	noSecret(t, "the result's message", res.Message)
}

// A GitRepository whose URL holds credentials (userinfo, a token query)
// on a host that cannot be reached: the revert's error, which goes to
// status.revert, events and logs, names the URL redacted, and is still
// told transient.
func TestGitReverter_NoSecretInError(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close() // nothing answers there now
	f := newGitFixture(t)
	f.k8s = fleetClient("http://user:SECRET@"+addr+"/fleet/podinfo.git?token=SECRET123", f.bad.Hash)
	_, err = f.reverter().Revert(context.Background(), f.request(v1alpha1.PullRequestRevert))
	if err == nil {
		t.Fatal("the revert did not fail")
	}
	noSecret(t, "the revert's error", err.Error())
	if !strings.Contains(err.Error(), "http://redacted@"+addr+"/fleet/podinfo.git?token=redacted") {
		t.Errorf("the error does not name the repository, redacted: %v", err)
	}
	if !IsTransient(err) {
		t.Errorf("an unreachable host is no longer transient once redacted: %v", err)
	}
}
