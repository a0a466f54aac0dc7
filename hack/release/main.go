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

// Command release builds a serin release into dist/; `make release` runs
// it with the Makefile's VERSION and LDFLAGS (see CONTRIBUTING.md).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"time"

	"github.com/serin-dev/serin/internal/release"
)

func main() {
	var (
		versionTag string
		opts       release.Options
	)
	flag.StringVar(&versionTag, "version", "", "the release's version: vMAJOR.MINOR.PATCH[-PRERELEASE], or a dev build's git describe")
	flag.StringVar(&opts.LDFlags, "ldflags", "", "the -X flags that stamp the version into the binaries")
	flag.StringVar(&opts.Image, "image", "ghcr.io/serin-dev/serin", "the agent's image repository")
	flag.StringVar(&opts.Dist, "dist", "dist", "the directory of the artefacts (emptied first)")
	flag.StringVar(&opts.Root, "root", ".", "the repository")
	flag.Parse()

	v, err := release.ParseVersion(versionTag)
	if err != nil {
		fail(err)
	}
	opts.Version = v
	opts.ModTime = modTime()
	opts.Log = os.Stdout
	if v.Dev {
		fmt.Printf("► serin %s: a dev build, not a release (no vX.Y.Z tag on a clean tree); chart version %s\n", v.Tag, v.Chart)
	} else {
		fmt.Printf("► serin %s\n", v.Tag)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	start := time.Now()
	artefacts, err := release.Run(ctx, opts)
	if err != nil {
		fail(err)
	}
	fmt.Printf("✔ %s in %s:\n", opts.Dist, time.Since(start).Round(time.Second))
	for _, a := range artefacts {
		fmt.Printf("  %-48s %10s\n", a.Name, size(a.Size))
	}
}

// size is n bytes in MiB, or KiB below one MiB.
func size(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// modTime is SOURCE_DATE_EPOCH (the Makefile sets the commit's time), so
// that the archives do not depend on when they were built.
func modTime() time.Time {
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		if sec, err := strconv.ParseInt(s, 10, 64); err == nil {
			return time.Unix(sec, 0)
		}
		fail(fmt.Errorf("SOURCE_DATE_EPOCH %q is not a number of seconds", s))
	}
	return time.Unix(0, 0)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "✗ release:", err)
	os.Exit(1)
}
