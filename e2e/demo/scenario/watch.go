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

package scenario

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/serin-dev/serin/internal/cli"
)

// watchCanaries runs `serin get canaries podinfo -n NS --watch` in-process,
// as a person would in a second terminal, with its rows printed as sub-lines
// tagged "watch", until ctx ends. The returned channel yields the command's
// error (nil when it was stopped by ctx) once it has returned.
func watchCanaries(ctx context.Context, s *settings) <-chan error {
	done := make(chan error, 1)
	cmd := cli.NewRootCommand()
	w := &columns{out: s.screen.Writer("watch")}
	cmd.SetOut(w)
	cmd.SetErr(w)
	cmd.SetArgs([]string{"get", "canaries", appName, "--namespace", s.namespace, "--watch",
		"--kubeconfig", s.env.Kubeconfig, "--timeout", "24h"})
	go func() {
		err := cmd.ExecuteContext(ctx)
		if ctx.Err() != nil {
			err = nil // stopped by the demo, not by a failure
		}
		done <- err
	}()
	return done
}

// columnWidths are the widths the watch's columns are padded to: NAME,
// GROUP, REVISION (main@sha1: and 8 hex digits), PHASE (WaitingPromotion),
// WEIGHT, SUSPENDED, READY; MESSAGE is last.
var columnWidths = []int{8, 5, 18, 16, 6, 9, 7}

// waveWidth is the width of the WAVE column, before MESSAGE, that the
// watch adds once the Canary promotes to a next stage (act 6): its
// widest cell is "production: Progressing".
const waveWidth = 23

// columns lays out the rows of `serin get canaries --watch` at fixed
// widths. The command lays out each new row on its own, as `flux get
// --watch` does, so that its rows do not line up under each other once
// other lines are printed between them; the cells are the command's.
type columns struct {
	mu  sync.Mutex
	out io.Writer
	buf string
}

func (c *columns) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf += string(p)
	for {
		line, rest, ok := strings.Cut(c.buf, "\n")
		if !ok {
			return len(p), nil
		}
		c.buf = rest
		if _, err := fmt.Fprintln(c.out, realign(line)); err != nil {
			return 0, err
		}
	}
}

// maxMessage is where the MESSAGE cell is cut: the full message of a
// failure is printed on its own line by the act.
const maxMessage = 90

// truncate cuts s to n runes, marking the cut.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// realign pads the tab-separated cells of a row to columnWidths, and to
// waveWidth the WAVE cell of a row that has one.
func realign(row string) string {
	cells := strings.Split(strings.TrimRight(row, "\t "), "\t")
	if len(cells) < 2 {
		return row
	}
	widths := columnWidths
	if len(cells) == len(columnWidths)+2 {
		widths = append(slices.Clip(columnWidths), waveWidth)
	}
	var b strings.Builder
	for i, cell := range cells {
		cell = strings.TrimSpace(cell)
		if i < len(widths) && i < len(cells)-1 {
			fmt.Fprintf(&b, "%-*s  ", widths[i], cell)
			continue
		}
		b.WriteString(truncate(cell, maxMessage) + "  ")
	}
	return strings.TrimRight(b.String(), " ")
}
