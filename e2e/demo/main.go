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

// Command demo is serin's main job on an embedded default, end to end with
// real components: it builds the testbed binaries (cached), starts a local
// control plane with kwok, Prometheus, Gitea and Flux (source-controller,
// kustomize-controller, notification-controller), builds and starts the
// serin agent from this tree, then plays six acts told in Git commits
// (scenario.Play): a healthy release promoted, an erroring one rolled back,
// one whose promotion fails (halted, revert pull request), the revert
// merged, two services released as one group and rolled back together, and
// a release promoted from staging to production through a pull request.
// It prints a summary, tears everything down, and exits non-zero when an
// act does not end as expected.
//
//	make demo
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/serin-dev/serin/e2e/demo/scenario"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	screen := scenario.NewScreen(os.Stdout)
	if err := run(ctx, screen); err != nil {
		screen.Fail("demo failed: %v", err)
		stop()
		os.Exit(1)
	}
}

const intro = `serin demo: progressive delivery for Flux users, end to end on a local testbed.

A Git repository holds podinfo (a Deployment and its Canary); Flux applies it;
serin rolls out every release it brings. Six acts, told in Git commits: v2 is
healthy, v3 errors, v4 cannot be promoted, serin's revert of v4 is merged, v5
and a frontend are released as one group, and v6 goes from staging to
production through a pull request serin opens. Watch the rows of 'serin get
canaries --watch', the notifications Flux delivers, and the pull requests.
`

func run(ctx context.Context, screen *scenario.Screen) error {
	fmt.Print(intro)
	if _, err := os.Stat("config/crd/bases"); err != nil {
		return errors.New("run the demo from the repository's root: make demo")
	}
	assets, err := testbedBinaries(ctx, screen)
	if err != nil {
		return err
	}
	b, err := startTestbed(ctx, screen, assets)
	if b != nil {
		defer b.stop(screen)
	}
	if err != nil {
		return err
	}
	report, err := scenario.Play(ctx, b.env)
	if err != nil {
		b.keepLogs = true
		return err
	}
	report.Print(os.Stdout)
	fmt.Printf("  whole demo: %s\n\n", screen.Elapsed().Round(time.Second))
	if !report.OK() {
		b.keepLogs = true
		if ctx.Err() != nil {
			return errors.New("interrupted")
		}
		return errors.New("an act did not end as expected")
	}
	screen.Done("all %d acts ended as expected", len(report.Acts))
	return nil
}
