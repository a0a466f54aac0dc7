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
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/cli"
	"github.com/serin-dev/serin/internal/testing/testobj"
	"github.com/serin-dev/serin/internal/testing/testutil"
)

// The dashboard in a real browser (headless Chromium) during a real
// rollout: the Canary's row appears and its weight changes without a
// reload, the weight chart gains a point at each step, and the Promote
// button promotes. Screenshots of both pages, light and dark, go to the
// test's directory, and to docs/images with UPDATE_GOLDEN=true.
func TestDashboard_LiveRolloutInABrowser(t *testing.T) {
	alone(t, "races a browser (screenshots, clicks) against the rollout's 4 s steps to promote before 90 %")
	g, ns, b := openDashboard(t, "")
	shots := screenshotDir(t)
	g.Eventually(b.text(`document.querySelector("#empty").hidden ? "" : "empty"`), 10*time.Second).Should(Equal("empty"))
	b.do(g, chromedp.Evaluate[chromedp.Void](`window.loadedOnce = true`))

	// Steps far enough apart for the test to see each one and to promote
	// in the middle of the analysis: 10 % every 4 s up to 90 %, each with
	// the error-rate check and a smoke test (a rollout webhook).
	smoke := newWebhook(t, http.StatusOK)
	c := gatewayCanary(t, g, ns, func(c *v1alpha1.Canary) {
		c.Spec.Analysis.Interval = &metav1.Duration{Duration: 4 * time.Second}
		c.Spec.Analysis.StepWeight = 10
		c.Spec.Analysis.MaxWeight = 90
		c.Spec.Analysis.Webhooks = []v1alpha1.CanaryWebhook{{Name: "smoke", Type: v1alpha1.RolloutHook, URL: smoke.URL}}
	})
	row := fmt.Sprintf(`document.querySelector('tr[data-key="%s/podinfo"]')`, ns)
	g.Eventually(b.text(row+`?.dataset.phase ?? ""`), 10*time.Second).Should(Equal("Initialized"), "the new Canary's row appears")

	setImage(g, ns, "podinfo", "podinfo:v2")
	weight := b.number(row + `?.dataset.weight ?? "-1"`)
	g.Eventually(weight, 30*time.Second, 50*time.Millisecond).Should(BeNumerically(">", 0), "the row's weight follows the rollout")
	first := weight()
	g.Eventually(weight, 15*time.Second, 50*time.Millisecond).Should(BeNumerically(">", first), "and its next step")
	g.Expect(b.text(`String(window.loadedOnce)`)()).To(Equal("true"), "without a reload")
	b.screenshots(g, shots, "dashboard-list")

	b.do(g, chromedp.Click(chromedp.CSS(fmt.Sprintf(`tr[data-key="%s/podinfo"] a.canary-link`, ns))),
		chromedp.WaitVisible(chromedp.CSS("#weight-chart svg")))
	points := b.number(`document.querySelector("#weight-chart svg").dataset.points`)
	g.Eventually(points, 10*time.Second).Should(BeNumerically(">", 0))
	before := points()
	g.Eventually(points, 15*time.Second, 100*time.Millisecond).Should(BeNumerically(">", before), "the weight chart gains the next step")
	g.Expect(b.text(`String(document.querySelectorAll(".check-chart").length)`)()).To(Equal("1"), "a chart of the error-rate check")
	g.Expect(b.text(`document.querySelector(".steps").textContent`)()).To(ContainSubstring("smoke (rollout): Passed"), "the webhook's verdicts")
	b.screenshots(g, shots, "dashboard-canary")

	b.do(g, chromedp.Click(chromedp.CSS("#action-promote")), chromedp.WaitVisible(chromedp.CSS("#confirm-button")),
		chromedp.Click(chromedp.CSS("#confirm-button")))
	g.Eventually(b.text(`document.querySelector("#action-status").textContent`), 10*time.Second).
		Should(ContainSubstring("promote request"))
	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 30*time.Second)
	g.Expect(c.Status.HandledRequests.Promote).NotTo(BeEmpty(), "the agent handled the dashboard's request")
	g.Expect(c.Status.Analyses[0].Result).To(Equal(v1alpha1.PhaseSucceeded))
	g.Expect(c.Status.Analyses[0].Steps[len(c.Status.Analyses[0].Steps)-1].Weight).To(BeNumerically("<", 90), "promoted before the analysis ended")
	g.Eventually(b.text(`document.querySelector("#canary-phase").textContent`), 10*time.Second).Should(Equal("Succeeded"))
	g.Eventually(b.text(`document.querySelector("#action-status").textContent`), 10*time.Second).
		Should(HavePrefix("promote request handled by the agent"))
}

// After a revision failed on real traffic, and once its events are gone
// (deleted here: the API server drops them after an hour), the Canary's
// page shows why: the rollout Failed, the values that decided it (the
// request-success-rate measured below its min) and a chart of the check
// with its min line.
func TestDashboard_FailedRolloutShowsWhy(t *testing.T) {
	shared(t)
	g, ns, b := openDashboard(t, "")
	ctx := context.Background()
	c := gatewayCanary(t, g, ns, withBuiltinChecks)
	releaseRevision(g, ns, "podinfo", "podinfo:v3", erroring(10))
	waitForPhase(g, c, v1alpha1.PhaseFailed, 90*time.Second)
	g.Expect(k8s.DeleteAllOf(ctx, &corev1.Event{}, client.InNamespace(ns))).To(Succeed())

	b.do(g, chromedp.Navigate(strings.TrimSuffix(b.text(`location.origin`)(), "/")+"/canaries/"+ns+"/podinfo"),
		chromedp.WaitVisible(chromedp.CSS("#analysis")))
	g.Eventually(b.text(`document.querySelector("#canary-phase").textContent`), 10*time.Second).Should(Equal("Failed"))
	decisive := b.text(`Array.from(document.querySelectorAll("#analysis ul.decisive li")).map(li => li.textContent).join("\n")`)
	g.Eventually(decisive, 10*time.Second).Should(MatchRegexp(`request-success-rate \d+(\.\d+)? \(min 99\): Failed`))
	t.Logf("the page says it failed by:\n%s", decisive())
	g.Expect(b.text(`String(document.querySelectorAll(".check-chart").length)`)()).To(Equal("2"), "a chart of each built-in check")
	g.Expect(b.text(`document.querySelector("#analysis").textContent`)()).To(ContainSubstring("min 99"))
}

// A CanaryGroup's release in the browser: its card with the verdict, the
// members side by side on one time line (a row and a dot per analysis step
// each), and the members table, live as the release goes on.
func TestDashboard_GroupMembersOnOneTimeline(t *testing.T) {
	shared(t)
	g, ns, b := openDashboard(t, "")
	ctx := context.Background()
	for _, app := range []string{"api", "web"} {
		g.Expect(k8s.Create(ctx, testobj.MakeDeployment(app, ns).Replicas(1).Image(app+":v1").Obj())).To(Succeed())
		c := testobj.MakeCanary(app, ns).Target("apps/v1", "Deployment", app).
			Analysis(v1alpha1.CanaryAnalysis{Interval: &metav1.Duration{Duration: time.Second}, Iterations: 3}).Obj()
		g.Expect(k8s.Create(ctx, c)).To(Succeed())
		waitForPhase(g, c, v1alpha1.PhaseInitialized, 30*time.Second)
	}
	g.Expect(k8s.Create(ctx, &v1alpha1.CanaryGroup{ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: ns},
		Spec: v1alpha1.CanaryGroupSpec{Window: &metav1.Duration{Duration: time.Second},
			Members: []v1alpha1.GroupMember{{Name: "api"}, {Name: "web"}}}})).To(Succeed())
	for _, app := range []string{"api", "web"} {
		setImage(g, ns, app, app+":v2")
	}
	card := fmt.Sprintf(`document.querySelector('article.group[data-key="%s/shop"]')`, ns)
	g.Eventually(b.text(card+`?.dataset.phase || ""`), 60*time.Second).Should(Equal(string(v1alpha1.PhaseSucceeded)))
	g.Expect(b.text(card + `.querySelector("h3").textContent`)()).To(Equal("shop"))
	g.Eventually(b.number(card+`.querySelectorAll("figure.chart svg").length`), 10*time.Second).Should(Equal(1), "one time line for the release")
	members := b.text(`Array.from(` + card + `.querySelectorAll("table.group-members tbody tr")).map(tr => tr.textContent).join("\n")`)
	g.Eventually(members, 10*time.Second).Should(And(ContainSubstring("api"), ContainSubstring("web")))
	t.Logf("the group's members as the page shows them:\n%s", members())
	timeline := b.text(card + `.querySelector("figure.chart svg").textContent`)
	g.Expect(timeline()).To(And(ContainSubstring("api"), ContainSubstring("web")), "a row of the time line per member")
}

// The page is usable with the keyboard: the first Tab reaches the skip
// link, `?` opens the help, `t` switches the theme.
func TestDashboard_Keyboard(t *testing.T) {
	shared(t)
	g, _, b := openDashboard(t, "")
	b.do(g, chromedp.KeyEvent("\t"))
	g.Expect(b.text(`document.activeElement.className`)()).To(Equal("skip-link"))
	b.do(g, chromedp.KeyEvent("\r"))
	g.Expect(b.text(`document.activeElement.id`)()).To(Equal("main"), "the skip link moves to the content")
	b.do(g, chromedp.KeyEvent("?"))
	g.Expect(b.text(`String(document.querySelector("#help").open)`)()).To(Equal("true"))
	b.do(g, chromedp.KeyEvent("\x1b")) // Escape closes the dialog
	g.Expect(b.text(`String(document.querySelector("#help").open)`)()).To(Equal("false"))
	b.do(g, chromedp.KeyEvent("/"))
	g.Expect(b.text(`document.activeElement.id`)()).To(Equal("filter"))
	b.do(g, chromedp.Evaluate[chromedp.Void](`document.activeElement.blur()`))
	light := b.text(`getComputedStyle(document.body).backgroundColor`)()
	b.do(g, chromedp.KeyEvent("t"))
	g.Expect(b.text(`document.documentElement.dataset.theme`)()).To(Equal("dark"))
	g.Expect(b.text(`document.querySelector("#theme-toggle").getAttribute("aria-pressed")`)()).To(Equal("true"))
	g.Expect(b.text(`getComputedStyle(document.body).backgroundColor`)()).NotTo(Equal(light))
}

// A user whose role does not grant the Canaries sees why on the page; the
// dashboard keeps running, and shows them once the role is granted.
func TestDashboard_ForbiddenIsShown(t *testing.T) {
	shared(t)
	ctx := context.Background()
	user := "dashboard-user-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	g, ns, b := openDashboard(t, user)
	problem := b.text(`document.querySelector("#problem").hidden ? "" : document.querySelector("#problem").textContent`)
	g.Eventually(problem, 10*time.Second).Should(And(
		HavePrefix("The dashboard cannot show the Canaries. Forbidden: your Kubernetes user may not do this."),
		ContainSubstring(`User "`+user+`" cannot list resource "canaries" in API group "serin.dev" in the namespace "`+ns+`"`)))

	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "serin-dashboard", Namespace: ns},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"serin.dev"}, Resources: []string{"canaries"}, Verbs: []string{"get", "list", "watch"}}},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "serin-dashboard", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	g.Expect(k8s.Create(ctx, role)).To(Succeed())
	g.Expect(k8s.Create(ctx, binding)).To(Succeed())
	g.Eventually(problem, 20*time.Second, 200*time.Millisecond).Should(BeEmpty(), "the watch retries with the new role")
	g.Eventually(b.text(`document.querySelector("#count").textContent`), 5*time.Second).Should(Equal("0 Canaries"))
}

// openDashboard starts the dashboard of a new namespace, as user (the
// testbed's admin when empty), and opens its list in a browser.
func openDashboard(t *testing.T, user string) (Gomega, string, *browser) {
	chromium := chromiumPath(t)
	g := NewWithT(t)
	ns := newNamespace(t)
	kubeconfig := env.Kubeconfig
	if user != "" {
		var err error
		kubeconfig, err = env.UserKubeconfig(user)
		g.Expect(err).NotTo(HaveOccurred())
	}
	url := startDashboard(t, ns, kubeconfig)
	b := openBrowser(t, chromium)
	b.do(g, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS("#count")))
	return g, ns, b
}

// chromiumPath finds Chromium (hack/testbed/packages.sh installs Debian's):
// without it the test fails in CI and is skipped elsewhere.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{os.Getenv("SERIN_CHROMIUM"), "/usr/bin/chromium", "chromium", "chromium-browser"} {
		if name == "" {
			continue
		}
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	const missing = "needs Chromium (Debian's package chromium, which hack/testbed/packages.sh installs; or SERIN_CHROMIUM=path)"
	if os.Getenv("CI") == "true" {
		t.Fatal(missing)
	}
	t.Skip(missing)
	return ""
}

// startDashboard runs `serin dashboard -n ns` in-process against the
// testbed, connected with kubeconfig, until the test ends, and returns its
// URL.
func startDashboard(t *testing.T, ns, kubeconfig string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, in := io.Pipe()
	done := make(chan error, 1)
	go func() {
		cmd := cli.NewRootCommand()
		cmd.SetArgs([]string{"dashboard", "--port", "0", "-n", ns, "--kubeconfig", kubeconfig})
		cmd.SetOut(in)
		cmd.SetErr(io.Discard)
		err := cmd.ExecuteContext(ctx)
		in.CloseWithError(fmt.Errorf("the dashboard ended: %v", err))
		done <- err
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the dashboard ended with %v", err)
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	go func() { _, _ = io.Copy(io.Discard, out) }()
	if err != nil {
		t.Fatal(err)
	}
	// serin dashboard at http://127.0.0.1:PORT/ (Ctrl-C to stop)
	fields := strings.Fields(line)
	if len(fields) < 4 || !strings.HasPrefix(fields[3], "http://127.0.0.1:") {
		t.Fatalf("the dashboard printed %q", line)
	}
	return fields[3]
}

// browser is a headless Chromium tab.
type browser struct {
	ctx context.Context
}

func openBrowser(t *testing.T, chromium string) *browser {
	t.Helper()
	profile, err := os.MkdirTemp("", "serin-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 900),
		// No connection of its own: this network refuses them.
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc() // waits for the browser to exit
		_ = os.RemoveAll(profile)
	})
	// Start the browser now, so that its start-up counts in no wait.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", chromium, err)
	}
	return &browser{ctx: ctx}
}

// do runs actions, each bounded.
func (b *browser) do(g Gomega, actions ...chromedp.Action[chromedp.Void]) {
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	g.Expect(chromedp.Do(ctx, actions...)).To(Succeed())
}

// text returns a probe of a JavaScript expression's string value ("" on an
// error), for Eventually.
func (b *browser) text(expression string) func() string {
	return func() string {
		ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
		defer cancel()
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](expression))
		if err != nil {
			return ""
		}
		return s
	}
}

// number returns a probe of a JavaScript expression's numeric value (-1 on
// an error).
func (b *browser) number(expression string) func() int {
	text := b.text(`String(` + expression + `)`)
	return func() int {
		n, err := strconv.Atoi(text())
		if err != nil {
			return -1
		}
		return n
	}
}

// screenshots saves the page as NAME-light.png and NAME-dark.png in dir,
// the browser set to prefer each scheme in turn, and checks that the
// scheme changes the page.
func (b *browser) screenshots(g Gomega, dir, name string) {
	background := b.text(`getComputedStyle(document.body).backgroundColor`)
	var backgrounds []string
	for _, scheme := range []string{"light", "dark"} {
		b.do(g, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
			})
			return err
		}), chromedp.Sleep(300*time.Millisecond)) // the charts' and rows' transitions
		ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		cancel()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(os.WriteFile(filepath.Join(dir, name+"-"+scheme+".png"), png, 0o644)).To(Succeed())
		backgrounds = append(backgrounds, background())
	}
	g.Expect(backgrounds[0]).NotTo(Equal(backgrounds[1]), "the dark scheme changes the page")
	b.do(g, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{})
		return err
	}))
}

// screenshotDir is docs/images with UPDATE_GOLDEN=true (the screenshots the
// documentation shows), else a directory of the test's.
func screenshotDir(t *testing.T) string {
	if testutil.UpdateGolden() {
		return filepath.Join("..", "docs", "images")
	}
	dir := t.TempDir()
	t.Logf("screenshots in %s (UPDATE_GOLDEN=true writes them to docs/images)", dir)
	return dir
}

// A Canary's wave in the browser: the Wave card lists each stage with its
// phase, the pull request and the stage commit. The status is written
// here, on a Canary the suite's agent does not watch (the shard label),
// so that the page is judged on a known wave; the agent writes the same
// fields in TestWaves_*.
func TestDashboard_WaveCard(t *testing.T) {
	shared(t)
	g, ns, b := openDashboard(t, "")
	ctx := context.Background()
	// A soak needs a metric with a thresholdRange (the CRD refuses one
	// that could never fail).
	floor := 99.0
	c := testobj.MakeCanary("podinfo", ns).Analysis(v1alpha1.CanaryAnalysis{Interval: &metav1.Duration{Duration: time.Second}, Iterations: 1,
		Metrics: []v1alpha1.CanaryMetric{{Name: v1alpha1.RequestSuccessRateCheck, ThresholdRange: &v1alpha1.ThresholdRange{Min: &floor}}}}).Obj()
	c.Labels = map[string]string{shardLabel: "not-this-agent"}
	c.Spec.GitOps = &v1alpha1.GitOpsSpec{Promote: []v1alpha1.PromotionTarget{
		{Stage: "production", Path: "./production"}, {Stage: "dr", Path: "./dr", Soak: &metav1.Duration{Duration: time.Hour}},
	}}
	g.Expect(k8s.Create(ctx, c)).To(Succeed())
	now := metav1.Now()
	c.Status.Phase = v1alpha1.PhaseSucceeded
	c.Status.LastPromotedRevision = "main@sha1:2a771a1eda64d302b8d49efb0507985a345c7255"
	c.Status.Promotions = []v1alpha1.PromotionStatus{
		{Stage: "production", Revision: c.Status.LastPromotedRevision, Phase: v1alpha1.WaveSucceeded, LastTransitionTime: &now,
			PullRequestURL: "https://git.example/fleet/pulls/2", StageCommit: "191d91d49b85d546ff0000000000000000000000",
			Message: "Canary production/podinfo: revision promoted"},
		{Stage: "dr", Revision: c.Status.LastPromotedRevision, Phase: v1alpha1.WaveSoaking, LastTransitionTime: &now, SoakUntil: &now,
			Message: "soaking"},
	}
	g.Expect(k8s.Status().Update(ctx, c)).To(Succeed())

	b.do(g, chromedp.Navigate(strings.TrimSuffix(b.text(`location.origin`)(), "/")+"/canaries/"+ns+"/podinfo"),
		chromedp.WaitVisible(chromedp.CSS("#wave-card")))
	rows := b.text(`Array.from(document.querySelectorAll("#wave tbody tr")).map(tr => tr.dataset.stage + ": " + tr.textContent).join("\n")`)
	g.Eventually(rows, 10*time.Second).Should(And(
		MatchRegexp(`production: production\s*Succeeded`), ContainSubstring("191d91d4"), ContainSubstring("revision promoted"),
		MatchRegexp(`dr: dr\s*Soaking`), ContainSubstring("soaks until")))
	g.Expect(b.text(`document.querySelector('#wave tr[data-stage="production"] a').href`)()).To(Equal("https://git.example/fleet/pulls/2"))
	t.Logf("the wave as the page shows it:\n%s", rows())
}
