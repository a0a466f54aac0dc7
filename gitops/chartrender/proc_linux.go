//go:build linux

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
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"
)

// exitCPU is the child's exit code when it passed its CPU bound.
const exitCPU = 3

// isolate makes the child the leader of its own process group, killed
// with it on cancel, and killed when the agent dies.
func isolate(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		return cmd.Process.Kill()
	}
}

// killed reports whether the child died of SIGKILL (the agent kills it
// only on a deadline, which the caller tells apart).
func killed(state *os.ProcessState) bool {
	ws, ok := state.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// cpuKilled reports whether the child died of a signal after using its
// CPU time: the kernel's SIGXCPU or SIGKILL of RLIMIT_CPU.
func cpuKilled(state *os.ProcessState, limit time.Duration) bool {
	ws, ok := state.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return false
	}
	return ws.Signal() == syscall.SIGXCPU || state.UserTime()+state.SystemTime() >= limit
}

// isPipeError reports whether err is a write to a child that no longer
// reads.
func isPipeError(err error) bool {
	return errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed)
}

// bindSelf bounds the child's own process: memory more bytes of address
// space than it has mapped now (a Go program maps about 1 GiB of address
// space it never uses before its first allocation, so a bound on the
// total would starve it), a Go memory limit under it, so that the
// collector works before the address space runs out, and cpuSeconds of
// CPU time, after which SIGXCPU ends it with exitCPU (and the kernel
// kills it two seconds later if that did not).
//
// It also makes itself the kernel's first choice when the pod runs out of
// memory (oom_score_adj 1000): the agent's memory limit is shared with its
// children, and a child is what should die. That is best effort (a /proc
// mounted read-only refuses it): the bounds above do not depend on it.
func bindSelf(memory int64, cpuSeconds uint64) error {
	_ = os.WriteFile("/proc/self/oom_score_adj", []byte("1000"), 0)
	mapped, err := mappedBytes()
	if err != nil {
		return err
	}
	as := uint64(mapped + memory)
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: as, Max: as}); err != nil {
		return fmt.Errorf("bounding the address space: %w", err)
	}
	debug.SetMemoryLimit(memory / 4 * 3)
	xcpu := make(chan os.Signal, 1)
	signal.Notify(xcpu, syscall.SIGXCPU)
	go func() {
		<-xcpu
		_, _ = os.Stderr.WriteString("the CPU time bound is passed\n")
		os.Exit(exitCPU)
	}()
	if err := syscall.Setrlimit(syscall.RLIMIT_CPU, &syscall.Rlimit{Cur: cpuSeconds, Max: cpuSeconds + 2}); err != nil {
		return fmt.Errorf("bounding the CPU time: %w", err)
	}
	return nil
}

// mappedBytes is the process's address space now (VmSize).
func mappedBytes() (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(line, []byte("VmSize:")); ok {
			kb, err := strconv.ParseInt(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(v), []byte("kB")))), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("reading VmSize: %w", err)
			}
			return kb << 10, nil
		}
	}
	return 0, errors.New("no VmSize in /proc/self/status")
}
