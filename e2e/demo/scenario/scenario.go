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

// Package scenario is serin's main job told to a person: a Git repository
// with an app, Flux applying it, serin rolling out its releases, each a
// Git commit, and carrying the last one to production through a pull
// request, while the screen shows the live `serin get canaries --watch`
// view, the notifications Flux delivers, and the pull requests serin
// opens. `make demo` plays it on a fresh local testbed (e2e/demo), and
// e2e/demo_test.go plays it on the e2e testbed, so the demo is proven by
// `make test`.
package scenario

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testbed"
)

// Env is the testbed the scenario plays on. The serin agent must run
// against it with GitOps revert to Gitea (--git-provider=gitea) and its
// events sent to notification-controller (--events-addr); Flux's
// source-controller, kustomize-controller and notification-controller must
// run, a Gateway API data plane must program the Gateway gateways/public
// (the testbed's Traefik), and the agent's --metrics-server Prometheus must
// scrape its metrics (the built-in checks).
type Env struct {
	// Config is an admin REST config and Kubeconfig the same as a file,
	// for the serin CLI.
	Config     *rest.Config
	Kubeconfig string
	// Gitea hosts the app's repository.
	Gitea *testbed.Gitea
	// GatewayURL is the listener of the Gateway gateways/public: the app's
	// users send their requests there.
	GatewayURL string

	// Namespace of the app and its Flux objects, created when missing;
	// "demo" when empty.
	Namespace string
	// Repository is the name of the Gitea repository; "fleet" when empty.
	Repository string
	// Interval is the Canary's analysis interval; 3s when zero.
	Interval time.Duration
	// Screen prints the play; a new one on standard output when nil.
	Screen *Screen
}

// settings are the Env with its defaults applied and a client.
type settings struct {
	env        Env
	kube       client.Client
	screen     *Screen
	namespace  string
	repository string
	interval   time.Duration
}

func newSettings(env Env) (*settings, error) {
	if env.Config == nil || env.Gitea == nil || env.GatewayURL == "" || env.Kubeconfig == "" {
		return nil, errors.New("scenario: Env needs Config, Kubeconfig, Gitea and GatewayURL")
	}
	s := &settings{env: env, screen: env.Screen, namespace: env.Namespace, repository: env.Repository, interval: env.Interval}
	if s.screen == nil {
		s.screen = NewScreen(os.Stdout)
	}
	if s.namespace == "" {
		s.namespace = "demo"
	}
	if s.repository == "" {
		s.repository = "fleet"
	}
	if s.interval == 0 {
		s.interval = 3 * time.Second
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	kube, err := client.New(rest.CopyConfig(env.Config), client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	s.kube = kube
	return s, nil
}

// Play seeds the repository and Flux, then plays the acts in order,
// each until it ends as expected or fails; an act that fails ends the play.
// The error is for a failure outside the acts (the seeding, the watch);
// Report.OK tells whether every act ended as expected.
func Play(ctx context.Context, env Env) (*Report, error) {
	s, err := newSettings(env)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sink, err := startSink(ctx, s.screen)
	if err != nil {
		return nil, err
	}
	p := &play{settings: s, sink: sink}
	watchCtx, stopWatch := context.WithCancel(ctx)
	watched := watchCanaries(watchCtx, s)
	report, err := p.run(ctx)
	stopWatch()
	if werr := <-watched; werr != nil && err == nil {
		err = fmt.Errorf("serin get canaries --watch: %w", werr)
	}
	return report, err
}

// run seeds, then plays the acts.
func (p *play) run(ctx context.Context) (*Report, error) {
	if err := p.seed(ctx); err != nil {
		return nil, fmt.Errorf("seeding the repository and Flux: %w", err)
	}
	report := &Report{}
	for i, a := range acts {
		res := p.playAct(ctx, i+1, a)
		report.Acts = append(report.Acts, res)
		if res.Err != nil {
			break
		}
	}
	for i := len(report.Acts); i < len(acts); i++ {
		report.Acts = append(report.Acts, ActResult{Number: i + 1, Title: acts[i].title, Expected: acts[i].expect})
	}
	report.Messages = p.sink.count()
	if p.pr != nil {
		report.PullRequestURL = p.pr.HTMLURL
	}
	if p.promotion != nil {
		report.PromotionURL = p.promotion.HTMLURL
	}
	return report, nil
}

// playAct plays one act with a time limit and measures it.
func (p *play) playAct(ctx context.Context, n int, a act) ActResult {
	p.screen.Header("Act %d/%d · %s", n, len(acts), a.title)
	res := ActResult{Number: n, Title: a.title, Expected: a.expect, Played: true}
	start, messages := time.Now(), p.sink.count()
	p.actMessages, p.actUsers = messages, nil
	actCtx, cancel := context.WithTimeout(ctx, actTimeout)
	defer cancel()
	res.Err = a.run(p, actCtx)
	res.Duration = time.Since(start)
	res.Users = p.users.Counts(start, time.Time{})
	if p.actUsers != nil {
		res.Users = p.actUsers()
	}
	res.Messages = p.sink.count() - messages
	res.Got = p.phase(ctx)
	if res.Err == nil && res.Got != a.expect {
		res.Err = fmt.Errorf("the canary is %s, expected %s", res.Got, a.expect)
	}
	if res.Err != nil {
		p.screen.Fail("Act %d: %v", n, res.Err)
		return res
	}
	p.screen.Done("Act %d: %s in %s · %d notifications", n, res.Got, round(res.Duration), res.Messages)
	return res
}

// actTimeout bounds each act; a healthy act takes a few analysis intervals.
const actTimeout = 3 * time.Minute

// Report is the outcome of a play.
type Report struct {
	Acts []ActResult
	// PullRequestURL is the revert pull request serin opened.
	PullRequestURL string
	// PromotionURL is the pull request serin opened to promote a release
	// to production.
	PromotionURL string
	// Messages is the number of notifications the sink received.
	Messages int
}

// ActResult is the outcome of one act.
type ActResult struct {
	Number   int
	Title    string
	Played   bool
	Expected v1alpha1.CanaryPhase
	Got      v1alpha1.CanaryPhase
	Duration time.Duration
	Messages int
	// Users are the requests the app's users sent during the act, as they
	// saw them (production's users in the act that promotes to it).
	Users testbed.Counts
	Err   error
}

// OK reports whether every act was played and ended as expected.
func (r *Report) OK() bool {
	for _, a := range r.Acts {
		if !a.Played || a.Err != nil {
			return false
		}
	}
	return len(r.Acts) == len(acts)
}

// Print writes the summary table.
func (r *Report) Print(w io.Writer) {
	fmt.Fprintln(w, "\nSummary")
	fmt.Fprintf(w, "  %-3s %-62s %-10s %-10s %8s %9s %18s\n", "act", "", "expected", "ended", "time", "messages", "users' errors")
	for _, a := range r.Acts {
		got, took := string(a.Got), round(a.Duration)
		if !a.Played {
			got, took = "not played", "-"
		}
		mark := "✔"
		if !a.Played || a.Err != nil {
			mark = "✗"
		}
		fmt.Fprintf(w, "  %-3d %-62s %-10s %-10s %8s %9d %18s %s\n", a.Number, a.Title, a.Expected, got, took, a.Messages,
			fmt.Sprintf("%d of %d", a.Users.Errors, a.Users.Total), mark)
	}
	if r.PullRequestURL != "" {
		merged := ""
		if r.OK() {
			merged = " (opened by serin in act 3, merged in act 4)"
		}
		fmt.Fprintf(w, "  revert pull request: %s%s\n", r.PullRequestURL, merged)
	}
	if r.PromotionURL != "" {
		merged := ""
		if r.OK() {
			merged = " (opened by serin and merged in act 6)"
		}
		fmt.Fprintf(w, "  promotion pull request: %s%s\n", r.PromotionURL, merged)
	}
	fmt.Fprintf(w, "  notifications delivered by Flux's notification-controller to the sink: %d\n", r.Messages)
}
