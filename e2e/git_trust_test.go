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
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/gitops"
)

// The Git trust tests prove on the testbed's Gitea what docs/security.md
// ("What serin may do in your Git repositories") says serin does when
// other people write to the repository it writes to: a branch pushed
// first under serin's name is never proposed nor adopted, a busy
// repository does not hide serin's pull request, and a push never writes
// over a person's hotfix. Each test is a wave from staging to production
// (waves_test.go) in one repository.

// trustSoak is staging's soak in the Git trust tests: long enough for a
// person to push during it.
const trustSoak = 20 * time.Second

// giteaPerson is a Gitea user other than the testbed's admin (whose
// token serin and Flux use), a collaborator with write access to one
// repository: someone else who may push to it and open pull requests.
type giteaPerson struct {
	name, password string
}

// newGiteaPerson creates a Gitea user and gives it write access to the
// admin's repository repo.
func newGiteaPerson(g Gomega, repo, name string) giteaPerson {
	ctx := context.Background()
	p := giteaPerson{name: fmt.Sprintf("%s-%d", name, time.Now().UnixNano()%1000000), password: "Person-Passw0rd"}
	g.Expect(gitea.API(ctx, http.MethodPost, "/admin/users", map[string]any{
		"username": p.name, "email": p.name + "@testbed.serin.dev", "password": p.password,
		"must_change_password": false,
	}, nil)).To(Succeed())
	g.Expect(gitea.API(ctx, http.MethodPut, fmt.Sprintf("/repos/%s/%s/collaborators/%s", gitea.User, repo, p.name),
		map[string]any{"permission": "write"}, nil)).To(Succeed())
	return p
}

// api calls the Gitea API (path relative to /api/v1) as the person.
func (p giteaPerson) api(method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, gitea.URL+"/api/v1"+path, body)
	if err != nil {
		return err
	}
	req.SetBasicAuth(p.name, p.password)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		return fmt.Errorf("gitea %s %s as %s: %s: %s", method, path, p.name, resp.Status, strings.TrimSpace(string(b)))
	}
	if out != nil && len(b) > 0 {
		return json.Unmarshal(b, out)
	}
	return nil
}

// giteaCommitOn commits content to file on a new branch made from main,
// with Gitea's contents API, as whoever call authenticates, and returns
// the commit: one push of one commit by that person.
func giteaCommitOn(g Gomega, call func(method, path string, in, out any) error, repo, branch, file, content, message string, author map[string]string) string {
	var existing struct {
		SHA string `json:"sha"`
	}
	method := http.MethodPost
	in := map[string]any{
		"content": base64.StdEncoding.EncodeToString([]byte(content)), "branch": "main", "new_branch": branch,
		"message": message, "author": author, "committer": author,
	}
	if call(http.MethodGet, fmt.Sprintf("/repos/%s/%s/contents/%s?ref=main", gitea.User, repo, file), nil, &existing) == nil && existing.SHA != "" {
		method, in["sha"] = http.MethodPut, existing.SHA
	}
	var out struct {
		Commit struct {
			SHA string `json:"sha"`
		} `json:"commit"`
	}
	g.Expect(call(method, fmt.Sprintf("/repos/%s/%s/contents/%s", gitea.User, repo, file), in, &out)).To(Succeed())
	g.Expect(out.Commit.SHA).To(HaveLen(40))
	return out.Commit.SHA
}

// giteaPull is what the tests read of one Gitea pull request.
type giteaPull struct {
	Number   int       `json:"number"`
	State    string    `json:"state"`
	Title    string    `json:"title"`
	Body     string    `json:"body"`
	HTMLURL  string    `json:"html_url"`
	Comments int       `json:"comments"`
	Merged   bool      `json:"merged"`
	Updated  time.Time `json:"updated_at"`
	Head     struct {
		Ref string `json:"ref"`
		Sha string `json:"sha"`
	} `json:"head"`
}

func readPull(g Gomega, repo string, number int) giteaPull {
	var pr giteaPull
	g.Expect(gitea.API(context.Background(), http.MethodGet, fmt.Sprintf("/repos/%s/%s/pulls/%d", gitea.User, repo, number), nil, &pr)).To(Succeed())
	return pr
}

// pullNumber is the number of a Gitea pull request from its URL.
func pullNumber(g Gomega, url string) int {
	i := strings.LastIndex(url, "/")
	g.Expect(i).To(BeNumerically(">", 0), "a pull request URL: %q", url)
	n, err := strconv.Atoi(url[i+1:])
	g.Expect(err).NotTo(HaveOccurred(), "a pull request URL: %q", url)
	return n
}

// productionKustomization is production/kustomization.yaml at tag.
func productionKustomization(prod, tag string) string {
	return waveKustomization(prod, tag) + "  - provider.yaml\n"
}

// stageOf is staging's entry of the production stage, whatever its
// revision and phase.
func (w *wave) stageOf(g Gomega) v1alpha1.PromotionStatus {
	c := w.canary(g, w.staging.ns)
	g.Expect(c.Status.Promotions).To(HaveLen(1))
	return c.Status.Promotions[0]
}

// Someone who may push to the repository pushes serin's promotion branch
// first, during staging's soak, with another image (newTag: evil), and
// opens a pull request from it. serin never proposes nor adopts it: it
// writes its own commit under the branch's name with -2 and opens its
// own pull request from there, with the promoted image only; the other
// pull request is left open and untouched (no comment, no new commit,
// title and body as its author wrote them). A reviewer then closes
// serin's pull request: the stage reads serin's own pull request, not
// the other one still open, and goes to Error.
func TestGitTrust_ForeignBranchIsNeverProposed(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	w := newWave(t, g, nil)
	stg, prod, repo := w.staging.ns, w.production.ns, w.staging.name
	mallory := newGiteaPerson(g, repo, "mallory")

	v2 := w.release(g, waveRelease{staging: "v2", production: "v1", soak: trustSoak}, "Release podinfo v2 to staging")
	waitForPhase(g, w.canary(g, stg), v1alpha1.PhaseSucceeded, 90*time.Second)
	soaking := w.stage(g, v2, v1alpha1.WaveSoaking, 10*time.Second)

	// During the soak: the promotion branch, pushed by someone else with
	// another image, and a pull request from it.
	branch := gitops.PromoteBranch(w.canary(g, stg), "production", v2)
	g.Expect(branch).To(Equal(fmt.Sprintf("serin/promote/production/%s/podinfo/%s", stg, v2[:8])))
	evilCommit := giteaCommitOn(g, mallory.api, repo, branch, "production/kustomization.yaml", productionKustomization(prod, "evil"),
		"serin: promote Deployment/podinfo to production\n\nSerin-Canary: "+stg+"/podinfo\nSerin-Stage: production\nSerin-Promotes: "+v2+"\n",
		map[string]string{"name": "Mallory", "email": "mallory@testbed.serin.dev"})
	var evil giteaPull
	g.Expect(mallory.api(http.MethodPost, fmt.Sprintf("/repos/%s/%s/pulls", gitea.User, repo), map[string]any{
		"head": branch, "base": "main", "title": "serin: promote Deployment/podinfo to production", "body": "Serin-Promotes: " + v2,
	}, &evil)).To(Succeed())
	g.Expect(time.Now()).To(BeTemporally("<", soaking.SoakUntil.Time), "the branch and its pull request came during the soak")
	evilBefore := readPull(g, repo, evil.Number)
	g.Expect(evilBefore.Head.Sha).To(Equal(evilCommit))

	opened := w.stage(g, v2, v1alpha1.WaveOpened, trustSoak+60*time.Second)
	g.Expect(opened.Branch).To(Equal(branch+"-2"), "promotion: %+v", opened)
	g.Expect(opened.PullRequestURL).NotTo(BeEmpty())
	g.Expect(opened.PullRequestURL).NotTo(Equal(evil.HTMLURL), "the other pull request is never adopted")
	own := readPull(g, repo, pullNumber(g, opened.PullRequestURL))
	g.Expect(own.Head.Ref).To(Equal(branch + "-2"))
	g.Expect(own.Head.Sha).To(Equal(opened.Commit))
	g.Expect(own.Body).To(ContainSubstring("Serin-Promotes: " + v2))
	diff, err := gitea.Raw(context.Background(), fmt.Sprintf("/repos/%s/%s/pulls/%d.diff", gitea.User, repo, own.Number))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(diff).To(ContainSubstring("+    newTag: v2 # the released version"))
	g.Expect(diff).NotTo(ContainSubstring("evil"))
	var serinCommit struct {
		Commit struct {
			Author struct {
				Name string `json:"name"`
			} `json:"author"`
		} `json:"commit"`
		Parents []struct {
			Sha string `json:"sha"`
		} `json:"parents"`
	}
	g.Expect(gitea.API(context.Background(), http.MethodGet, fmt.Sprintf("/repos/%s/%s/git/commits/%s", gitea.User, repo, opened.Commit), nil, &serinCommit)).To(Succeed())
	g.Expect(serinCommit.Commit.Author.Name).To(Equal("serin-e2e"))
	g.Expect(serinCommit.Parents).To(HaveLen(1))
	g.Expect(serinCommit.Parents[0].Sha).NotTo(Equal(evilCommit), "serin's commit is not built on the other branch")

	// The other pull request, after a few verdict reads: as its author
	// left it.
	time.Sleep(2 * 5 * time.Second)
	evilAfter := readPull(g, repo, evil.Number)
	g.Expect(evilAfter.State).To(Equal("open"))
	g.Expect(evilAfter.Head.Sha).To(Equal(evilCommit))
	g.Expect(evilAfter.Title).To(Equal(evilBefore.Title))
	g.Expect(evilAfter.Body).To(Equal(evilBefore.Body))
	g.Expect(evilAfter.Comments).To(BeZero())
	var comments, reviews []json.RawMessage
	g.Expect(gitea.API(context.Background(), http.MethodGet, fmt.Sprintf("/repos/%s/%s/issues/%d/comments", gitea.User, repo, evil.Number), nil, &comments)).To(Succeed())
	g.Expect(gitea.API(context.Background(), http.MethodGet, fmt.Sprintf("/repos/%s/%s/pulls/%d/reviews", gitea.User, repo, evil.Number), nil, &reviews)).To(Succeed())
	g.Expect(comments).To(BeEmpty())
	g.Expect(reviews).To(BeEmpty())
	g.Expect(w.stageOf(g).Phase).To(Equal(v1alpha1.WaveOpened))
	g.Expect(w.stageOf(g).PullRequestURL).To(Equal(own.HTMLURL))
	t.Logf("foreign_branch=%s foreign_pull_request=%d serin_branch=%s serin_pull_request=%d soak=%s",
		branch, evil.Number, opened.Branch, own.Number, trustSoak)

	// A reviewer closes serin's pull request: the stage says so, whatever
	// the other pull request from the branch's first name.
	g.Expect(gitea.API(context.Background(), http.MethodPatch, fmt.Sprintf("/repos/%s/%s/pulls/%d", gitea.User, repo, own.Number),
		map[string]any{"state": "closed"}, nil)).To(Succeed())
	closed := time.Now()
	var last v1alpha1.PromotionStatus
	g.Eventually(func(g Gomega) {
		last = w.stageOf(g)
		g.Expect(last.Phase).To(Equal(v1alpha1.WaveError), "promotion: %+v", last)
	}, time.Minute, 200*time.Millisecond).Should(Succeed(), func() string {
		return fmt.Sprintf("the stage reads serin's own pull request (closed), not the other one (open); last seen: phase=%s message=%q", last.Phase, last.Message)
	})
	g.Expect(last.Message).To(ContainSubstring(own.HTMLURL + " was closed without a merge"))
	g.Expect(readPull(g, repo, evil.Number).State).To(Equal("open"))
	t.Logf("serin_pull_request_closed_to_error=%s", time.Since(closed).Round(100*time.Millisecond))
}

// busyPullRequests is how many other pull requests are open beside
// serin's in TestGitTrust_BusyRepositoryFindsItsPullRequest.
const busyPullRequests = 35

// serin's promotion pull request is open; 35 other pull requests are
// opened in the repository after it. The stage keeps reading its
// verdict (every 5 s) and stays Opened, never Error; once serin's pull
// request is merged, production rolls it out and the stage completes.
func TestGitTrust_BusyRepositoryFindsItsPullRequest(t *testing.T) {
	alone(t, "35 pull requests load the shared Gitea; counts the verdict reads of one minute")
	g := NewWithT(t)
	ctx := context.Background()
	w := newWave(t, g, nil)
	stg, prod, repo := w.staging.ns, w.production.ns, w.staging.name

	v2 := w.release(g, waveRelease{staging: "v2", production: "v1"}, "Release podinfo v2 to staging")
	waitForPhase(g, w.canary(g, stg), v1alpha1.PhaseSucceeded, 90*time.Second)
	w.stage(g, v2, v1alpha1.WaveOpened, 60*time.Second)
	pr := w.promotionPR(g, v2)

	phases := sample(t, func() string {
		c := &v1alpha1.Canary{}
		if err := k8s.Get(ctx, types.NamespacedName{Namespace: stg, Name: "podinfo"}, c); err != nil || len(c.Status.Promotions) == 0 {
			return "none"
		}
		return c.Status.Promotions[0].Phase
	})
	reads := sample(t, func() string {
		c := &v1alpha1.Canary{}
		if err := k8s.Get(ctx, types.NamespacedName{Namespace: stg, Name: "podinfo"}, c); err != nil || len(c.Status.Promotions) == 0 {
			return "none"
		}
		p := c.Status.Promotions[0]
		if p.NextAttemptTime == nil {
			return p.Phase
		}
		return p.Phase + "@" + p.NextAttemptTime.UTC().Format(time.RFC3339)
	})
	// The others open their pull requests, 5 at a time (one after the
	// other took a minute and more of the suite).
	var mu sync.Mutex
	var failures []string
	slots := make(chan struct{}, 5)
	var wg sync.WaitGroup
	for i := range busyPullRequests {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			// Failures are collected here and asserted on the test's
			// goroutine.
			gw := NewGomega(func(message string, _ ...int) {
				mu.Lock()
				defer mu.Unlock()
				failures = append(failures, message)
			})
			branch := fmt.Sprintf("docs/note-%02d", i)
			giteaCommitOn(gw, func(method, path string, in, out any) error { return gitea.API(ctx, method, path, in, out) },
				repo, branch, fmt.Sprintf("notes/note-%02d.md", i), fmt.Sprintf("Note %d\n", i), fmt.Sprintf("Add note %d", i),
				map[string]string{"name": "Dev", "email": "dev@testbed.serin.dev"})
			gw.Expect(gitea.API(ctx, http.MethodPost, fmt.Sprintf("/repos/%s/%s/pulls", gitea.User, repo), map[string]any{
				"head": branch, "base": "main", "title": fmt.Sprintf("Add note %d", i),
			}, nil)).To(Succeed())
		})
	}
	wg.Wait()
	g.Expect(failures).To(BeEmpty(), "every other pull request was opened")
	busy := time.Now()
	var open []json.RawMessage
	g.Expect(gitea.API(ctx, http.MethodGet, fmt.Sprintf("/repos/%s/%s/pulls?state=open&limit=50", gitea.User, repo), nil, &open)).To(Succeed())
	g.Expect(open).To(HaveLen(busyPullRequests+1), "serin's and the others")

	// At least two verdict reads after the repository got busy: each read
	// schedules the next one (nextAttemptTime).
	readsBefore := len(reads.seen())
	g.Eventually(func() int { return len(reads.seen()) - readsBefore }, time.Minute, 200*time.Millisecond).Should(BeNumerically(">=", 2))
	p := w.stageOf(g)
	g.Expect(p.Phase).To(Equal(v1alpha1.WaveOpened), "promotion: %+v", p)
	g.Expect(p.Attempts).To(BeZero(), "no verdict read failed: %+v", p)
	g.Expect(p.Message).To(Equal("waiting for the pull request to be merged"))
	g.Expect(p.PullRequestURL).To(Equal(pr.HTMLURL))
	readsWhileBusy := len(reads.seen()) - readsBefore

	merged := time.Now()
	m2 := w.merge(g, pr)
	waitForPhase(g, w.canary(g, prod), v1alpha1.PhaseSucceeded, 90*time.Second)
	done := w.stage(g, v2, v1alpha1.WaveSucceeded, 60*time.Second)
	completed := time.Since(merged)
	g.Expect(done.StageCommit).To(Equal(m2))
	g.Expect(phases.seen()).NotTo(ContainElement(v1alpha1.WaveError), "never Error on the way")
	t.Logf("other_open_pull_requests=%d verdict_reads_while_busy=%d busy_for=%s merge_to_succeeded=%s phases=%s",
		busyPullRequests, readsWhileBusy, merged.Sub(busy).Round(100*time.Millisecond), completed.Round(100*time.Millisecond),
		strings.Join(phases.seen(), ","))
}

// pushWaveFiles is waveFiles whose production stage is written with mode
// Push: straight to main, no pull request.
func pushWaveFiles(stg, prod string, r waveRelease) map[string]string {
	files := waveFiles(stg, prod, r)
	files["staging/canary.yaml"] = strings.Replace(files["staging/canary.yaml"], "        soak: ", "        mode: Push\n        soak: ", 1)
	return files
}

// A Push-mode stage soaks; during the soak a person pushes a hotfix of
// production's image to main. After the soak serin refuses to write over
// it: the stage goes to Error naming the hotfix commit, with a warning
// event (StageError), and main still holds the hotfix. A person who
// reviewed it asks for the promotion (serin.dev/promote-to, what `serin
// promote --to` sets): serin pushes it on top of the hotfix.
func TestGitTrust_PushModeNeverOverwritesAHotfix(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	w := newWave(t, g, nil)
	stg, prod, repo := w.staging.ns, w.production.ns, w.staging.name

	release := waveRelease{staging: "v2", production: "v1", soak: trustSoak}
	w.staging.pull(g)
	v2 := w.staging.push(pushWaveFiles(stg, prod, release), "Release podinfo v2 to staging")
	w.staging.sync(g, v2)
	waitForPhase(g, w.canary(g, stg), v1alpha1.PhaseSucceeded, 90*time.Second)
	soaking := w.stage(g, v2, v1alpha1.WaveSoaking, 10*time.Second)
	g.Expect(w.canary(g, stg).Spec.GitOps.Promote[0].Mode).To(Equal(v1alpha1.PushRevert))

	// A person's hotfix of production's image, during the soak (a few
	// seconds into it: Git's and status.promotions[].startedAt's clocks
	// count whole seconds, and a commit of the wave's first second is
	// not counted as made after its start).
	time.Sleep(time.Until(soaking.StartedAt.Add(2 * time.Second)))
	w.staging.pull(g)
	hotfix := w.staging.push(map[string]string{"production/kustomization.yaml": productionKustomization(prod, "v1-hotfix")}, "Hotfix: production runs v1-hotfix")
	g.Expect(time.Now()).To(BeTemporally("<", soaking.SoakUntil.Time), "the hotfix came during the soak")

	refused := w.stage(g, v2, v1alpha1.WaveError, trustSoak+60*time.Second)
	refusedAfterSoak := time.Since(soaking.SoakUntil.Time)
	g.Expect(refused.Message).To(ContainSubstring(hotfix[:8]))
	g.Expect(refused.Message).To(ContainSubstring("changed by someone else"))
	g.Expect(w.staging.head(g)).To(Equal(hotfix), "main still ends with the hotfix")
	file, err := gitea.Raw(ctx, fmt.Sprintf("/repos/%s/%s/raw/production/kustomization.yaml?ref=main", gitea.User, repo))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(file).To(ContainSubstring("newTag: v1-hotfix"))
	var stageError *corev1.Event
	g.Eventually(func(g Gomega) {
		events := &corev1.EventList{}
		g.Expect(k8s.List(ctx, events, client.InNamespace(stg))).To(Succeed())
		for i, e := range events.Items {
			if e.Reason == v1alpha1.StageErrorReason {
				stageError = &events.Items[i]
			}
		}
		g.Expect(stageError).NotTo(BeNil(), "a StageError event")
	}, 10*time.Second, 200*time.Millisecond).Should(Succeed())
	g.Expect(stageError.Type).To(Equal(corev1.EventTypeWarning))
	g.Expect(stageError.Message).To(ContainSubstring(hotfix[:8]))

	// The person accepts: serin.dev/promote-to, as `serin promote --to
	// production` sets it.
	c := w.canary(g, stg)
	patch := client.MergeFrom(c.DeepCopy())
	request := "production@" + strconv.FormatInt(time.Now().UnixNano(), 10)
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations[v1alpha1.PromoteToRequestAnnotation] = request
	g.Expect(k8s.Patch(ctx, c, patch)).To(Succeed())
	asked := time.Now()
	pushed := w.stage(g, v2, v1alpha1.WaveMerged, 60*time.Second)
	pushedAfter := time.Since(asked)
	g.Expect(w.canary(g, stg).Status.HandledRequests.PromoteTo).To(Equal(request))
	g.Expect(pushed.Branch).To(Equal("main"))
	g.Expect(pushed.PullRequestURL).To(BeEmpty())
	g.Expect(w.staging.head(g)).To(Equal(pushed.Commit))
	var commit struct {
		Commit struct {
			Message string `json:"message"`
			Author  struct {
				Name string `json:"name"`
			} `json:"author"`
		} `json:"commit"`
		Parents []struct {
			Sha string `json:"sha"`
		} `json:"parents"`
	}
	g.Expect(gitea.API(ctx, http.MethodGet, fmt.Sprintf("/repos/%s/%s/git/commits/%s", gitea.User, repo, pushed.Commit), nil, &commit)).To(Succeed())
	g.Expect(commit.Commit.Author.Name).To(Equal("serin-e2e"))
	g.Expect(commit.Commit.Message).To(ContainSubstring("Serin-Promotes: " + v2))
	g.Expect(commit.Parents).To(HaveLen(1))
	g.Expect(commit.Parents[0].Sha).To(Equal(hotfix), "pushed on top of the hotfix, never over it")
	file, err = gitea.Raw(ctx, fmt.Sprintf("/repos/%s/%s/raw/production/kustomization.yaml?ref=main", gitea.User, repo))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(file).To(ContainSubstring("newTag: v2 # the released version"))
	g.Expect(w.staging.pullRequests(g)).To(BeEmpty(), "mode Push opens no pull request")
	t.Logf("hotfix=%s soak_end_to_error=%s promote_to_pushed=%s error_message=%q",
		hotfix[:8], refusedAfterSoak.Round(100*time.Millisecond), pushedAfter.Round(100*time.Millisecond), refused.Message)
}
