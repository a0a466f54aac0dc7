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
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Screen prints the demo for a person: steps and results, act headers, and
// sub-lines tagged with their source (git, flux, watch, sink, …) and the
// time since the demo started. It is safe for concurrent use: the CLI's
// watch and the notification sink print while an act runs.
type Screen struct {
	mu    sync.Mutex
	out   io.Writer
	start time.Time
}

// NewScreen prints to out; its clock starts now.
func NewScreen(out io.Writer) *Screen {
	return &Screen{out: out, start: time.Now()}
}

// Step announces what is being done.
func (s *Screen) Step(format string, args ...any) { s.print("► " + fmt.Sprintf(format, args...)) }

// Done reports what was done.
func (s *Screen) Done(format string, args ...any) { s.print("✔ " + fmt.Sprintf(format, args...)) }

// Fail reports what went wrong.
func (s *Screen) Fail(format string, args ...any) { s.print("✗ " + fmt.Sprintf(format, args...)) }

// Note prints an indented line without a source, for explanations.
func (s *Screen) Note(format string, args ...any) { s.print("  " + fmt.Sprintf(format, args...)) }

// Header opens a section (an act) after a blank line.
func (s *Screen) Header(format string, args ...any) {
	title := fmt.Sprintf(format, args...)
	s.print("\n━━ " + title + " " + strings.Repeat("━", max(3, 76-len([]rune(title)))))
}

// Line prints a sub-line from source, prefixed with the elapsed time
// (mm:ss since the screen was created).
func (s *Screen) Line(source, format string, args ...any) {
	text := fmt.Sprintf(format, args...)
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		s.print(fmt.Sprintf("  %s  %-6s  %s", s.clock(), source, l))
	}
}

// Elapsed is the time since the screen was created.
func (s *Screen) Elapsed() time.Duration { return time.Since(s.start) }

// Writer returns an io.Writer whose lines are printed as sub-lines of source.
func (s *Screen) Writer(source string) io.Writer { return &lineWriter{screen: s, source: source} }

func (s *Screen) clock() string {
	d := s.Elapsed().Round(time.Second)
	return fmt.Sprintf("%02d:%02d", int(d.Minutes()), int(d.Seconds())%60)
}

func (s *Screen) print(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintln(s.out, line)
}

// lineWriter buffers writes and prints complete lines.
type lineWriter struct {
	mu     sync.Mutex
	screen *Screen
	source string
	buf    []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := strings.IndexByte(string(w.buf), '\n')
		if i < 0 {
			return len(p), nil
		}
		line := strings.TrimRight(string(w.buf[:i]), " \t")
		w.buf = w.buf[i+1:]
		if line != "" {
			w.screen.Line(w.source, "%s", line)
		}
	}
}

// round formats a duration for people: 12.3s, 1m04s.
func round(d time.Duration) string {
	if d < time.Minute {
		return d.Round(100 * time.Millisecond).String()
	}
	d = d.Round(time.Second)
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}
