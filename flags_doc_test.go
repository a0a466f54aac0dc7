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

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/fluxcd/pkg/runtime/acl"
	"github.com/fluxcd/pkg/runtime/client"
	helper "github.com/fluxcd/pkg/runtime/controller"
	feathelper "github.com/fluxcd/pkg/runtime/features"
	"github.com/fluxcd/pkg/runtime/leaderelection"
	"github.com/fluxcd/pkg/runtime/logger"
	flag "github.com/spf13/pflag"
)

// docs/guides/agent.md says it lists every flag of the agent: its table has
// a row for each flag main registers, and none for a flag that does not
// exist.
func TestAgentGuideListsEveryFlag(t *testing.T) {
	// The option sets main binds, on a flag set of the test's.
	fs := flag.NewFlagSet("serin-agent", flag.ContinueOnError)
	var (
		clientOptions         client.Options
		logOptions            logger.Options
		leaderElectionOptions leaderelection.Options
		rateLimiterOptions    helper.RateLimiterOptions
		watchOptions          helper.WatchOptions
		featureGates          feathelper.FeatureGates
		aclOptions            acl.Options
		revertOptions         gitopsRevertOptions
	)
	aclOptions.BindFlags(fs)
	clientOptions.BindFlags(fs)
	logOptions.BindFlags(fs)
	leaderElectionOptions.BindFlags(fs)
	rateLimiterOptions.BindFlags(fs)
	watchOptions.BindFlags(fs)
	featureGates.BindFlags(fs)
	revertOptions.BindFlags(fs)
	var flags []string
	fs.VisitAll(func(f *flag.Flag) { flags = append(flags, f.Name) })
	// main's own flags, registered in main() on flag.CommandLine.
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`flag\.[A-Za-z0-9]+\(&\w+, "([a-z0-9-]+)"`).FindAllSubmatch(src, -1) {
		flags = append(flags, string(m[1]))
	}
	if len(flags) < 40 {
		t.Fatalf("found %d flags; the agent has more than 40", len(flags))
	}
	doc, err := os.ReadFile(filepath.Join("docs", "guides", "agent.md"))
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for _, m := range regexp.MustCompile("(?m)^\\| `--([a-z0-9-]+)`").FindAllSubmatch(doc, -1) {
		documented = append(documented, string(m[1]))
	}
	for _, f := range flags {
		if !slices.Contains(documented, f) {
			t.Errorf("--%s has no row in docs/guides/agent.md's table of flags", f)
		}
	}
	for _, d := range documented {
		if !slices.Contains(flags, d) {
			t.Errorf("docs/guides/agent.md documents --%s, which the agent does not take", d)
		}
	}
}
