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

// Command serin-testbed starts and stops serin's local testbed (etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler, kwok with pods
// served on loopback, Traefik as the Gateway API data plane and Prometheus
// scraping it) in the background, for `make testbed-up` and
// `make testbed-down`. DIR/gateway-url and DIR/prometheus-url name the
// Gateway's listener and Prometheus.
//
//	serin-testbed up   --dir .testbed   start it; prints the kubeconfig path
//	serin-testbed down --dir .testbed   stop it
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/serin-dev/serin/internal/testing/testbed"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: serin-testbed up|down|serve --dir DIR [--crds DIR]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	dir := fs.String("dir", ".testbed", "directory for the kubeconfig, logs and pid file")
	crds := fs.String("crds", "config/crd/bases", "directory of CRDs to install")
	_ = fs.Parse(os.Args[2:])
	abs, err := filepath.Abs(*dir)
	if err == nil {
		switch os.Args[1] {
		case "up":
			err = up(abs, *crds)
		case "down":
			err = down(abs)
		case "serve":
			err = serve(abs, *crds)
		default:
			err = fmt.Errorf("unknown command %q", os.Args[1])
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "serin-testbed:", err)
		os.Exit(1)
	}
}

// up starts `serve` detached and waits until the testbed is ready.
func up(dir, crds string) error {
	if pid, ok := running(dir); ok {
		fmt.Printf("testbed already up (pid %d): export KUBECONFIG=%s\n", pid, filepath.Join(dir, "kubeconfig"))
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	_ = os.Remove(filepath.Join(dir, "ready"))
	logFile, err := os.Create(filepath.Join(dir, "testbed.log"))
	if err != nil {
		return err
	}
	defer logFile.Close()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, "serve", "--dir", dir, "--crds", crds)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	fmt.Println("starting the testbed (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok, Traefik, Prometheus)…")
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(filepath.Join(dir, "ready")); err == nil {
			fmt.Printf("testbed up (pid %d): export KUBECONFIG=%s\n", cmd.Process.Pid, filepath.Join(dir, "kubeconfig"))
			return nil
		}
		if err := syscall.Kill(cmd.Process.Pid, 0); err != nil {
			return fmt.Errorf("testbed exited; see %s", logFile.Name())
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("testbed not ready after 2m; see %s", logFile.Name())
}

// serve runs the testbed in the foreground until SIGTERM or SIGINT.
func serve(dir, crds string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	gatewayCRDs, err := testbed.GatewayAPICRDs(ctx, ".")
	if err != nil {
		return err
	}
	tb, err := testbed.Start(ctx, testbed.Options{Dir: dir, Full: true, CRDDirs: []string{crds, gatewayCRDs}})
	if err != nil {
		return err
	}
	defer func() {
		if err := tb.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "serin-testbed: stopping the testbed:", err)
		}
	}()
	traefik, err := tb.StartTraefik(ctx, os.Getenv("KUBEBUILDER_ASSETS"))
	if err != nil {
		return err
	}
	prom, err := tb.StartPrometheus(ctx, 500*time.Millisecond, traefik.MetricsAddr, tb.Backends.MetricsAddr)
	if err != nil {
		return err
	}
	for name, url := range map[string]string{"gateway-url": traefik.URL, "prometheus-url": prom.URL} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(url+"\n"), 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("Gateway %s/%s (Traefik): %s; Prometheus: %s\n", testbed.GatewayNamespace, testbed.GatewayName, traefik.URL, prom.URL)
	if err := os.WriteFile(filepath.Join(dir, "pid"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "ready"), nil, 0o644); err != nil {
		return err
	}
	fmt.Println("testbed ready; kubeconfig:", tb.Kubeconfig)
	<-ctx.Done()
	fmt.Println("stopping the testbed")
	return nil
}

// down stops a testbed started by up.
func down(dir string) error {
	pid, ok := running(dir)
	if !ok {
		fmt.Println("no testbed running in", dir)
		return nil
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return err
	}
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			_ = os.Remove(filepath.Join(dir, "pid"))
			_ = os.Remove(filepath.Join(dir, "ready"))
			fmt.Println("testbed down")
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("testbed (pid %d) still running after 1m", pid)
}

// running returns the pid of a live testbed in dir.
func running(dir string) (int, bool) {
	b, err := os.ReadFile(filepath.Join(dir, "pid"))
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || syscall.Kill(pid, 0) != nil {
		return 0, false
	}
	return pid, true
}
