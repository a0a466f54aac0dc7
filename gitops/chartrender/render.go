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

package chartrender

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// ChildArg is the hidden first argument that makes the agent's binary a
// chart renderer (Main) instead of the agent.
const ChildArg = "__serin-render-chart"

// The default bounds of a render: each is a flag of the agent.
const (
	// DefaultMaxMemory bounds the memory the child maps beyond what it
	// had mapped when it started (RLIMIT_AS).
	DefaultMaxMemory int64 = 512 << 20
	// DefaultMaxCPU bounds the child's CPU time (RLIMIT_CPU).
	DefaultMaxCPU = 20 * time.Second
	// DefaultTimeout bounds a render's wall-clock time, waiting for the
	// child to start and end included.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxChartBytes bounds a chart's files and its unpacked
	// subchart archives together.
	DefaultMaxChartBytes int64 = 64 << 20
	// DefaultMaxOutputBytes bounds the rendered manifests, and the answer
	// the parent reads.
	DefaultMaxOutputBytes int64 = 32 << 20
	// DefaultMaxConcurrent bounds the children running at once.
	DefaultMaxConcurrent = 2
)

// The flags of the bounds, named in the errors of a bound passed.
const (
	FlagMaxMemory     = "--chart-render-max-memory"
	FlagMaxCPU        = "--chart-render-max-cpu-time"
	FlagTimeout       = "--chart-render-timeout"
	FlagMaxChartBytes = "--chart-render-max-chart-size"
	FlagMaxOutput     = "--chart-render-max-output"
	FlagMaxConcurrent = "--chart-render-max-concurrent"
)

// answerSlack is what the answer may take beyond the rendered manifests:
// its keys and the objects' names.
const answerSlack = 1 << 20

// stderrKept bounds what the parent keeps of the child's stderr.
const stderrKept = 16 << 10

// Limits are the bounds of the renders of a Renderer; a zero field is its
// default.
type Limits struct {
	MaxMemory      int64
	MaxCPU         time.Duration
	Timeout        time.Duration
	MaxChartBytes  int64
	MaxOutputBytes int64
	MaxConcurrent  int
}

// withDefaults fills the zero fields of l.
func (l Limits) withDefaults() Limits {
	def := func(v *int64, d int64) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.MaxMemory, DefaultMaxMemory)
	def(&l.MaxChartBytes, DefaultMaxChartBytes)
	def(&l.MaxOutputBytes, DefaultMaxOutputBytes)
	if l.MaxCPU <= 0 {
		l.MaxCPU = DefaultMaxCPU
	}
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	if l.MaxConcurrent <= 0 {
		l.MaxConcurrent = DefaultMaxConcurrent
	}
	return l
}

// Renderer renders charts and reads indexes in child processes, at most
// Limits.MaxConcurrent at once.
type Renderer struct {
	limits Limits
	slots  chan struct{}
}

// New returns a Renderer with limits (zero fields: the defaults).
func New(limits Limits) *Renderer {
	limits = limits.withDefaults()
	return &Renderer{limits: limits, slots: make(chan struct{}, limits.MaxConcurrent)}
}

// Limits returns the renderer's bounds, defaults filled in.
func (r *Renderer) Limits() Limits {
	return r.limits
}

// File is one file of a chart kept as a directory: its size, known before
// it is read, and how to read it (once, when it is sent).
type File struct {
	Name string
	Size int64
	Read func() ([]byte, error)
}

// Request is a chart to render: its files or its package, and the
// release's values, name and namespace.
type Request struct {
	// Files are a chart directory's; Archive a packaged chart.
	Files   []File
	Archive []byte
	Values  map[string]any
	// ReleaseName and Namespace are the release's.
	ReleaseName, Namespace string
}

// Object is one rendered object: its key, and the object as canonical
// JSON (encoding/json's encoding of the parsed manifest).
type Object struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Namespace  string          `json:"namespace"`
	Name       string          `json:"name"`
	JSON       json.RawMessage `json:"object"`
}

// Result is a chart's rendering.
type Result struct {
	// Chart is "name version".
	Chart   string
	Objects []Object
}

// IndexEntry is where an index puts a chart version's package.
type IndexEntry struct {
	// URL is the entry's first URL, as the index writes it.
	URL    string `json:"url"`
	Digest string `json:"digest"`
}

// BoundError is a render (or an index read) that went past one of its
// bounds: the child was refused or killed.
type BoundError struct {
	// What is what was bounded: "the chart's rendering", "the
	// repository's index".
	What string
	// Bound is the bound's name ("memory", "CPU time"), Limit its value,
	// Flag the agent's flag that sets it.
	Bound, Limit, Flag string
}

func (e *BoundError) Error() string {
	return fmt.Sprintf("%s went past its %s bound of %s (%s)", e.What, e.Bound, e.Limit, e.Flag)
}

// ChartError is a chart that does not load, or whose templates fail: what
// Helm said, at which stage.
type ChartError struct {
	// Stage is StageLoad, StageRender, StageIndex or StageRequest.
	Stage string
	// Chart is the chart's "name version", once it loaded.
	Chart   string
	Message string
}

func (e *ChartError) Error() string {
	return e.Message
}

// The bounds a child names in a failure.
const (
	boundChartBytes = "chart-bytes"
	boundOutput     = "output"
)

// Render renders req's chart in a child process, within r's bounds. A
// bound passed is a *BoundError, a chart that fails to load or render a
// *ChartError; the context's end ends the child.
func (r *Renderer) Render(ctx context.Context, req Request) (*Result, error) {
	const what = "the chart's rendering"
	total := int64(len(req.Archive))
	for _, f := range req.Files {
		total += f.Size
	}
	if total > r.limits.MaxChartBytes {
		return nil, r.bound(what, boundChartBytes)
	}
	values, err := json.Marshal(req.Values)
	if err != nil {
		return nil, fmt.Errorf("encoding the values: %w", err)
	}
	h := header{Op: opRender, MaxChartBytes: r.limits.MaxChartBytes, MaxOutputBytes: r.limits.MaxOutputBytes,
		ReleaseName: req.ReleaseName, Namespace: req.Namespace, Values: values}
	body := func(w io.Writer) error {
		if req.Archive != nil {
			if err := writeFrame(w, archiveName, req.Archive); err != nil {
				return err
			}
		}
		for _, f := range req.Files {
			b, err := f.Read()
			if err != nil {
				return &sourceError{err}
			}
			if int64(len(b)) != f.Size {
				return &sourceError{fmt.Errorf("%s: %d bytes where %d were counted", f.Name, len(b), f.Size)}
			}
			if err := writeFrame(w, f.Name, b); err != nil {
				return err
			}
		}
		return writeFrame(w, "", nil)
	}
	ans, err := r.run(ctx, what, h, body)
	if err != nil {
		return nil, err
	}
	return &Result{Chart: ans.Chart, Objects: ans.Objects}, nil
}

// ReadIndex reads a Helm repository's index from index (read up to
// maxBytes) in a child process, within r's bounds, for chart at version:
// found false when the index has no such version.
func (r *Renderer) ReadIndex(ctx context.Context, index io.Reader, maxBytes int64, chart, version string) (IndexEntry, bool, error) {
	h := header{Op: opIndex, MaxChartBytes: maxBytes, MaxOutputBytes: r.limits.MaxOutputBytes, Chart: chart, Version: version}
	body := func(w io.Writer) error {
		// One byte past the bound, for the child to tell it.
		_, err := io.Copy(w, io.LimitReader(index, maxBytes+1))
		if err != nil && !isPipeError(err) {
			return &sourceError{err}
		}
		return err
	}
	ans, err := r.run(ctx, "the repository's index", h, body)
	if err != nil {
		return IndexEntry{}, false, err
	}
	if ans.Entry == nil {
		return IndexEntry{}, false, nil
	}
	return *ans.Entry, true, nil
}

// sourceError is an error of the parent reading what it sends, not of
// the child.
type sourceError struct{ err error }

func (e *sourceError) Error() string { return e.err.Error() }
func (e *sourceError) Unwrap() error { return e.err }

// bound is the *BoundError of the bound named.
func (r *Renderer) bound(what, name string) *BoundError {
	switch name {
	case boundChartBytes:
		return &BoundError{What: what, Bound: "size", Limit: humanBytes(r.limits.MaxChartBytes), Flag: FlagMaxChartBytes}
	case boundOutput:
		return &BoundError{What: what, Bound: "output", Limit: humanBytes(r.limits.MaxOutputBytes), Flag: FlagMaxOutput}
	case "memory":
		return &BoundError{What: what, Bound: "memory", Limit: humanBytes(r.limits.MaxMemory), Flag: FlagMaxMemory}
	case "cpu":
		return &BoundError{What: what, Bound: "CPU time", Limit: r.cpuSeconds().String(), Flag: FlagMaxCPU}
	}
	return &BoundError{What: what, Bound: "wall-clock", Limit: r.limits.Timeout.String(), Flag: FlagTimeout}
}

// jobReserve is the time a render leaves its job (the Git job's bound)
// to fall back to the chart's inputs and write its change.
const jobReserve = 15 * time.Second

// timeoutWithin is a render's wall-clock bound: the flag's, or less when
// the job that asks for it ends sooner, so that a render past it ends in
// a fallback that names the bound, never in the job's own end.
func (r *Renderer) timeoutWithin(ctx context.Context) time.Duration {
	timeout := r.limits.Timeout
	if deadline, ok := ctx.Deadline(); ok {
		if left := time.Until(deadline) - jobReserve; left < timeout {
			timeout = max(left, time.Second)
		}
	}
	return timeout
}

// cpuSeconds is the CPU bound in whole seconds, as RLIMIT_CPU counts it.
func (r *Renderer) cpuSeconds() time.Duration {
	return max(time.Second, r.limits.MaxCPU.Round(time.Second))
}

// run runs one child: it waits for a slot, starts the child, writes h
// and body on its stdin, reads its answer, and says how it ended.
func (r *Renderer) run(ctx context.Context, what string, h header, body func(io.Writer) error) (*answer, error) {
	select {
	case r.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for a chart renderer (%s %d): %w", FlagMaxConcurrent, r.limits.MaxConcurrent, ctx.Err())
	}
	defer func() { <-r.slots }()
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding the agent's binary to render with: %w", err)
	}
	timeout := r.timeoutWithin(ctx)
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, exe, ChildArg,
		strconv.FormatInt(r.limits.MaxMemory, 10), strconv.FormatInt(int64(r.cpuSeconds()/time.Second), 10))
	// Nothing of the agent's environment: no credentials, no proxy.
	cmd.Env = []string{"GOTRACEBACK=none", "GOMAXPROCS=1"}
	isolate(cmd)
	cmd.WaitDelay = 2 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr := &headBuffer{max: stderrKept}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting a chart renderer: %w", err)
	}
	written := make(chan error, 1)
	go func() {
		err := writeFrame(stdin, headerName, mustJSON(h))
		if err == nil {
			err = body(stdin)
		}
		_ = stdin.Close()
		written <- err
	}()
	limit := r.limits.MaxOutputBytes + answerSlack
	out, readErr := io.ReadAll(io.LimitReader(stdout, limit+1))
	over := int64(len(out)) > limit
	if over {
		cancel()
	}
	writeErr := <-written
	var source *sourceError
	if errors.As(writeErr, &source) {
		cancel()
	}
	waitErr := cmd.Wait()
	switch {
	case over:
		return nil, r.bound(what, boundOutput)
	case source != nil:
		return nil, source.err
	case ctx.Err() != nil:
		return nil, fmt.Errorf("%s was stopped: %w", what, ctx.Err())
	case runCtx.Err() != nil:
		b := r.bound(what, "timeout")
		b.Limit = timeout.String()
		return nil, b
	}
	if waitErr != nil || readErr != nil {
		return nil, r.childError(what, cmd, stderr.String(), firstError(waitErr, readErr))
	}
	var ans answer
	if err := json.Unmarshal(out, &ans); err != nil {
		return nil, fmt.Errorf("reading the chart renderer's answer: %w", err)
	}
	if f := ans.Failure; f != nil {
		if f.Bound != "" {
			return nil, r.bound(what, f.Bound)
		}
		return nil, &ChartError{Stage: f.Stage, Chart: ans.Chart, Message: f.Message}
	}
	return &ans, nil
}

// childError says how a child that did not answer ended: past its memory
// or CPU bound, or otherwise (its stderr's first line).
func (r *Renderer) childError(what string, cmd *exec.Cmd, stderr string, err error) error {
	state := cmd.ProcessState
	switch {
	case strings.Contains(stderr, "out of memory"):
		return r.bound(what, "memory")
	case state != nil && state.ExitCode() == exitCPU:
		return r.bound(what, "cpu")
	case state != nil && cpuKilled(state, r.cpuSeconds()):
		return r.bound(what, "cpu")
	case state != nil && killed(state):
		// Killed by no one of the agent, under its CPU bound: the
		// kernel's out-of-memory killer.
		return r.bound(what, "memory")
	}
	line, _, _ := strings.Cut(strings.TrimSpace(stderr), "\n")
	if len(line) > 300 {
		line = line[:300]
	}
	if line == "" {
		return fmt.Errorf("the chart renderer ended: %w", err)
	}
	return fmt.Errorf("the chart renderer ended: %w: %s", err, line)
}

// firstError returns the first non-nil error.
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// headBuffer keeps the first max bytes written to it.
type headBuffer struct {
	bytes.Buffer
	max int
}

func (b *headBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// humanBytes writes a size as a person reads it: 512 MiB, 1.5 GiB.
func humanBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", (n+1023)>>10)
}
