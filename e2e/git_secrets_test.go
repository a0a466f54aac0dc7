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

package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/gitops"
)

// pathToken is a GitLab personal access token in a repository URL's path,
// as some hosts and proxies take it. A token in the URL's query
// (?token=…) cannot be tested here: no Git client of Flux's clones such a
// URL (go-git writes the request's path after the query and refuses the
// answer), so it never reaches serin; the redaction of query values is
// proven in gitops' unit tests.
const pathToken = "glpat-Zx9SecretSecret9zX"

// A tenant's repository URL carries a token in its path. While the host
// refuses serin's clone (503), the failure is shown in the Canary's status
// and events; once it answers, the revert's pull request is opened. The
// token appears in none of them: not in the status, not in an event, not
// in the pull request.
func TestGitTrust_TokenInRepositoryURLIsNeverWritten(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	recorder := startCredentialRecorder(t, gitea.URL)
	recorder.prefix = pathToken
	tenantURL := strings.Replace(gitea.RepositoryURL(ns), gitea.URL, recorder.URL+"/"+pathToken, 1)
	f := newFleetWith(t, g, ns, podinfoApp(ns, "v1", v1alpha1.PullRequestRevert), map[string]any{"url": tenantURL})
	first, err := f.repo.Reference("refs/heads/main", true)
	g.Expect(err).NotTo(HaveOccurred())
	f.sync(g, first.Hash().String())
	canary := &v1alpha1.Canary{}
	canary.Namespace, canary.Name = ns, "podinfo"
	waitForPhase(g, canary, v1alpha1.PhaseInitialized, 60*time.Second)

	app := podinfoApp(ns, "v2", v1alpha1.PullRequestRevert)
	app["apps/podinfo/deployment.yaml"] = podinfoDeployment(neverReady)
	bad := f.push(app, "Release podinfo v2")
	f.sync(g, bad)
	// Flux has what it needs: from now on the host refuses serin's clone.
	recorder.refuseGit.Store(true)
	waitForPhase(g, canary, v1alpha1.PhaseHalted, 90*time.Second)

	var written []string
	seen := func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(canary), canary)).To(Succeed())
		b, err := json.Marshal(canary.Status)
		g.Expect(err).NotTo(HaveOccurred())
		written = append(written, string(b))
		events := &corev1.EventList{}
		g.Expect(k8s.List(ctx, events, client.InNamespace(ns))).To(Succeed())
		for _, e := range events.Items {
			written = append(written, e.Message)
		}
	}
	// The refusal is shown.
	g.Eventually(func(g Gomega) {
		seen(g)
		g.Expect(canary.Status.Revert).NotTo(BeNil())
		g.Expect(canary.Status.Revert.Message).To(ContainSubstring("503"), "revert: %+v", canary.Status.Revert)
	}, 90*time.Second, 200*time.Millisecond).Should(Succeed())
	g.Expect(recorder.refusedGit.Load()).To(BeNumerically(">", 0))
	t.Logf("while refused: %s", canary.Status.Revert.Message)

	recorder.refuseGit.Store(false)
	g.Eventually(func(g Gomega) {
		seen(g)
		g.Expect(canary.Status.Revert.State).To(Equal(gitops.StateOpened), "revert: %+v", canary.Status.Revert)
	}, 3*time.Minute, 500*time.Millisecond).Should(Succeed())
	pr := onlyPullRequest(g, f)
	written = append(written, pr.Title, pr.Body)

	leaks := 0
	for _, w := range written {
		if strings.Contains(w, pathToken) {
			leaks++
			t.Errorf("the token is written: %s", w)
		}
	}
	t.Logf("token_in_url=path written_texts=%d leaks=%d refused_git_requests=%d", len(written), leaks, recorder.refusedGit.Load())
}
