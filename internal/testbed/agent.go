package testbed

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
)

// Agent is a serin agent built from the source tree and running against the
// testbed as a process, as users run it.
type Agent struct {
	// MetricsURL serves the agent's Prometheus metrics (and pprof).
	MetricsURL string
	cmd        *exec.Cmd
}

// StartAgent builds the agent from the module at root, starts it with the
// testbed's kubeconfig and extra flags, and waits until it is healthy.
func (tb *Testbed) StartAgent(ctx context.Context, root string, flags ...string) (*Agent, error) {
	bin := filepath.Join(tb.Dir, "serin-agent")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("failed to build the agent: %w\n%s", err, out)
	}
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	metrics := "127.0.0.1:" + strconv.Itoa(ports[0])
	health := "127.0.0.1:" + strconv.Itoa(ports[1])
	args := append([]string{
		"--metrics-addr=" + metrics, "--health-addr=" + health,
		"--log-level=debug", "--log-encoding=console",
	}, flags...)
	if err := tb.startProcess(bin, []string{"KUBECONFIG=" + tb.Kubeconfig}, args...); err != nil {
		return nil, err
	}
	a := &Agent{MetricsURL: "http://" + metrics + "/metrics", cmd: tb.procs[len(tb.procs)-1]}
	if err := tb.waitReady(ctx, "http://"+health+"/readyz"); err != nil {
		return nil, fmt.Errorf("serin agent: %w", err)
	}
	return a, nil
}

// PID is the agent process's id, to read its RSS and CPU from /proc.
func (a *Agent) PID() int { return a.cmd.Process.Pid }
