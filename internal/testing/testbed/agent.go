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

package testbed

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Agent is a serin agent built from the source tree and running against the
// testbed as a process, as users run it.
type Agent struct {
	// MetricsURL serves the agent's Prometheus metrics (and pprof).
	MetricsURL string
	// Name tells the agent's replicas apart: its log is Name.log.
	Name string

	tb        *Testbed
	bin       string
	env, args []string
	healthURL string
	cmd       *exec.Cmd
	log       *os.File
}

// AgentOptions describe one agent process.
type AgentOptions struct {
	// Name of the process and its log file; defaults to serin-agent.
	Name string
	// Env is added to the agent's environment (e.g. RUNTIME_NAMESPACE).
	Env []string
	// Flags are added to the agent's flags.
	Flags []string
	// User, when set, is the user the agent authenticates as: only the
	// RBAC bound to it (and to Groups) applies (the testbed's admin
	// otherwise). A service account's identity is the user
	// system:serviceaccount:NAMESPACE:NAME with the groups
	// system:serviceaccounts and system:serviceaccounts:NAMESPACE.
	User string
	// Groups of User.
	Groups []string
}

// StartAgent builds the agent from the module at root, starts it with the
// testbed's kubeconfig and extra flags, and waits until it is healthy.
func (tb *Testbed) StartAgent(ctx context.Context, root string, flags ...string) (*Agent, error) {
	return tb.StartAgentWith(ctx, root, AgentOptions{Flags: flags})
}

// StartAgentWith builds the agent from the module at root (once per
// testbed) and starts one process of it as opts say.
func (tb *Testbed) StartAgentWith(ctx context.Context, root string, opts AgentOptions) (*Agent, error) {
	bin := filepath.Join(tb.Dir, "serin-agent")
	tb.buildAgent.Lock()
	if _, err := os.Stat(bin); err != nil {
		build := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			tb.buildAgent.Unlock()
			return nil, fmt.Errorf("failed to build the agent: %w\n%s", err, out)
		}
	}
	tb.buildAgent.Unlock()
	if opts.Name == "" {
		opts.Name = "serin-agent"
	}
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	kubeconfig := tb.Kubeconfig
	if opts.User != "" {
		if kubeconfig, err = tb.UserKubeconfig(opts.User, opts.Groups...); err != nil {
			return nil, err
		}
	}
	metrics := "127.0.0.1:" + strconv.Itoa(ports[0])
	health := "127.0.0.1:" + strconv.Itoa(ports[1])
	a := &Agent{
		MetricsURL: "http://" + metrics + "/metrics",
		Name:       opts.Name,
		tb:         tb,
		bin:        bin,
		env:        append([]string{"KUBECONFIG=" + kubeconfig}, opts.Env...),
		args: append([]string{
			"--metrics-addr=" + metrics, "--health-addr=" + health,
			"--log-level=debug", "--log-encoding=console",
			// The testbed's Helm repositories are on loopback.
			"--chart-fetch-allow-loopback",
		}, opts.Flags...),
		healthURL: "http://" + health + "/readyz",
	}
	if err := a.Start(ctx); err != nil {
		return nil, err
	}
	return a, nil
}

// UserKubeconfig writes a kubeconfig of user in groups (a client
// certificate of the testbed's API server) and returns its path: what it
// may do is only what RBAC grants it.
func (tb *Testbed) UserKubeconfig(user string, groups ...string) (string, error) {
	tb.usersMu.Lock()
	defer tb.usersMu.Unlock()
	u, err := tb.env.AddUser(envtest.User{Name: user, Groups: groups}, nil)
	if err != nil {
		return "", fmt.Errorf("failed to create user %s: %w", user, err)
	}
	b, err := u.KubeConfig()
	if err != nil {
		return "", err
	}
	// A service account's user name holds colons, which separate the
	// paths of KUBECONFIG.
	path := filepath.Join(tb.Dir, strings.ReplaceAll(user, ":", "_")+".kubeconfig")
	return path, os.WriteFile(path, b, 0o600)
}

// Start starts the agent's process (again, after Kill), appending to its
// log, and waits until it is healthy.
func (a *Agent) Start(ctx context.Context) error {
	log, err := os.OpenFile(filepath.Join(a.tb.Dir, a.Name+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(a.bin, a.args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Env = append(os.Environ(), a.env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("failed to start %s: %w", a.Name, err)
	}
	a.cmd, a.log = cmd, log
	a.tb.track(cmd)
	if err := a.tb.waitReady(ctx, a.healthURL); err != nil {
		return fmt.Errorf("%s: %w", a.Name, err)
	}
	return nil
}

// Kill stops the agent's process with SIGKILL: no graceful shutdown, no
// lease released, writes in flight cut where they are.
func (a *Agent) Kill() error {
	a.tb.forget(a.cmd)
	if err := a.cmd.Process.Kill(); err != nil {
		return err
	}
	_ = a.cmd.Wait() // "signal: killed"
	a.log.Close()
	return nil
}

// Terminate stops the agent's process as the kubelet stops a pod: SIGTERM
// (the agent releases its Lease and stops its workers), then SIGKILL
// after grace.
func (a *Agent) Terminate(grace time.Duration) error {
	a.tb.forget(a.cmd)
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() {
		_ = a.cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(grace):
		_ = a.cmd.Process.Kill()
		<-done
	}
	a.log.Close()
	return nil
}

// Log is what the agent's process logged so far (every start of it).
func (a *Agent) Log() (string, error) {
	b, err := os.ReadFile(filepath.Join(a.tb.Dir, a.Name+".log"))
	return string(b), err
}

// Refusals are the lines of the agent's log in which the API server
// refused user a request (RBAC's `User "…" cannot …`, its quotes escaped
// where the log quotes the error): none when its RBAC is all it needs, its
// informers and leader election included.
func (a *Agent) Refusals(user string) ([]string, error) {
	log, err := a.Log()
	if err != nil {
		return nil, err
	}
	return refusals(log, user), nil
}

func refusals(log, user string) []string {
	var refused []string
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, `User "`+user+`" cannot`) || strings.Contains(line, `User \"`+user+`\" cannot`) {
			refused = append(refused, line)
		}
	}
	return refused
}

// PID is the agent process's id, to read its RSS and CPU from /proc.
func (a *Agent) PID() int { return a.cmd.Process.Pid }
