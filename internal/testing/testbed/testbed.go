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

// Package testbed runs a real Kubernetes control plane on loopback for
// serin's tests and demo: etcd and kube-apiserver through envtest, and, for
// the full testbed, kube-controller-manager, kube-scheduler and kwok (fake
// kubelets that make pods Running and Ready, so Deployments really roll out).
//
// The binaries come from hack/testbed/assets.sh, which builds them from the
// Go module proxy once and caches them outside the clone; Options.AssetsDir
// (or $KUBEBUILDER_ASSETS) points at them.
package testbed

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// stages is the kwok Stage configuration: pods become Ready within
// milliseconds, except those labelled NeverReadyLabel.
//
//go:embed stages.yaml
var stages []byte

const (
	// NeverReadyLabel on a pod (template) makes kwok run the pod without it
	// ever becoming Ready.
	NeverReadyLabel = "testbed.serin.dev/never-ready"

	// NeverReadyAsPrimaryAnnotation on a pod template makes kwok run the
	// pods of serin's primary (not the canary's) without them ever becoming
	// Ready: the revision passes its analysis, then breaks the promotion.
	NeverReadyAsPrimaryAnnotation = "testbed.serin.dev/never-ready-as-primary"

	// NeverReadyAsBaselineAnnotation on a pod template makes kwok run the
	// pods of the judge's baseline Deployment (labelled app=NAME-baseline)
	// without them ever becoming Ready; the primary's and the canary's
	// become Ready.
	NeverReadyAsBaselineAnnotation = "testbed.serin.dev/never-ready-as-baseline"

	// RestartsAnnotation on a pod template makes kwok report each
	// container of its pods restarted this many times when they become
	// Ready, the last termination's reason RestartReasonAnnotation
	// (OOMKilled, say; Error by default): a revision whose workers run,
	// but die again and again, as a pod that an OOM kill restarts does.
	RestartsAnnotation      = "testbed.serin.dev/restarts"
	RestartReasonAnnotation = "testbed.serin.dev/restart-reason"

	// NodeName is the kwok node the testbed creates.
	NodeName = "kwok-node-0"

	// kwokNodeAnnotation selects the nodes kwok manages.
	kwokNodeAnnotation = "kwok.x-k8s.io/node"
)

// Options configure a testbed.
type Options struct {
	// Dir holds the kubeconfig, certificates and process logs; a temporary
	// directory when empty.
	Dir string
	// AssetsDir holds etcd, kube-apiserver, kube-controller-manager,
	// kube-scheduler and kwok; defaults to $KUBEBUILDER_ASSETS.
	AssetsDir string
	// CRDDirs are installed before Start returns.
	CRDDirs []string
	// Full starts controller-manager, scheduler and kwok too; without it
	// the testbed is envtest's API server and etcd only.
	Full bool
	// ControlPlaneGOGC, when set, is the GOGC of etcd and kube-apiserver
	// (with a GOMEMLIMIT of 3 GiB that makes them collect sooner when
	// their heap grows that far): the e2e suite trades memory for the
	// API server's garbage collection, a sixth of its CPU at Go's default
	// of 100. The benchmarks leave it unset, so that their figures are
	// those of an API server as clusters run it.
	ControlPlaneGOGC int
}

// Testbed is a running control plane.
type Testbed struct {
	// Config is an admin REST config for the API server.
	Config *rest.Config
	// Kubeconfig is the path of an admin kubeconfig file.
	Kubeconfig string
	// Dir holds the kubeconfig and the logs of each process (NAME.log).
	Dir string

	// Backends serves the pods of the full testbed (nil without Full).
	Backends *Backends

	env    *envtest.Environment
	assets string
	// procsMu guards procs: tests running side by side start and stop
	// processes of the same testbed.
	procsMu      sync.Mutex
	procs        []*exec.Cmd
	stopBackends context.CancelFunc
	// buildAgent builds the agent's binary once; usersMu serializes the
	// client certificates envtest signs (its CA counts serials unlocked).
	buildAgent sync.Mutex
	usersMu    sync.Mutex
}

// Start brings a testbed up. On error, whatever was started is stopped.
func Start(ctx context.Context, opts Options) (_ *Testbed, err error) {
	if opts.AssetsDir == "" {
		opts.AssetsDir = os.Getenv("KUBEBUILDER_ASSETS")
	}
	if opts.AssetsDir == "" {
		return nil, errors.New("no testbed binaries: set KUBEBUILDER_ASSETS to the output of hack/testbed/assets.sh (make testbed-binaries)")
	}
	if opts.Dir == "" {
		if opts.Dir, err = os.MkdirTemp("", "serin-testbed-"); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, err
	}
	tb := &Testbed{Dir: opts.Dir, assets: opts.AssetsDir}
	defer func() {
		if err != nil {
			_ = tb.Stop()
		}
	}()

	tb.env = &envtest.Environment{
		BinaryAssetsDirectory:    opts.AssetsDir,
		CRDDirectoryPaths:        opts.CRDDirs,
		ErrorIfCRDPathMissing:    true,
		ControlPlaneStartTimeout: time.Minute,
		ControlPlaneStopTimeout:  time.Minute,
	}
	// envtest's default service range is a /24: too small for a few hundred
	// canaries (three Services each).
	tb.env.ControlPlane.GetAPIServer().Configure().Set("service-cluster-ip-range", "10.96.0.0/12")
	// The admin (the tests' client, Flux's controllers, Traefik,
	// kube-controller-manager) authenticates with a bearer token, as
	// controllers in a cluster do with their service account's: a client
	// certificate's chain is verified again on every request, 6 % of the
	// API server's CPU in the e2e suite. Users of their own (UserKubeconfig)
	// keep certificates.
	token, err := adminToken(opts.Dir)
	if err != nil {
		return nil, err
	}
	tb.env.ControlPlane.GetAPIServer().Configure().Set("token-auth-file", filepath.Join(opts.Dir, "admin-token.csv"))
	restore := setControlPlaneGOGC(opts.ControlPlaneGOGC)
	tb.Config, err = tb.env.Start()
	restore()
	if err != nil {
		return nil, fmt.Errorf("failed to start etcd and kube-apiserver: %w", err)
	}
	tb.Config = &rest.Config{
		Host:            tb.Config.Host,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: tb.Config.CAData},
		QPS:             tb.Config.QPS,
		Burst:           tb.Config.Burst,
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["testbed"] = &clientcmdapi.Cluster{Server: tb.Config.Host, CertificateAuthorityData: tb.Config.CAData}
	kc.AuthInfos["testbed-admin"] = &clientcmdapi.AuthInfo{Token: token}
	kc.Contexts["testbed"] = &clientcmdapi.Context{Cluster: "testbed", AuthInfo: "testbed-admin"}
	kc.CurrentContext = "testbed"
	tb.Kubeconfig = filepath.Join(opts.Dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, tb.Kubeconfig); err != nil {
		return nil, err
	}
	if !opts.Full {
		return tb, nil
	}
	if err := tb.startCluster(ctx, opts.AssetsDir); err != nil {
		return nil, err
	}
	return tb, nil
}

// adminToken writes the API server's token file in dir, with one random
// token for testbed-admin in system:masters, and returns the token.
func adminToken(dir string) (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	token := hex.EncodeToString(b)
	line := token + ",testbed-admin,testbed-admin,\"system:masters\"\n"
	if err := os.WriteFile(filepath.Join(dir, "admin-token.csv"), []byte(line), 0o600); err != nil {
		return "", err
	}
	return token, nil
}

// setControlPlaneGOGC sets GOGC (and a GOMEMLIMIT) in this process's
// environment, which envtest's etcd and kube-apiserver inherit, when gogc
// is above 0; the returned func puts the environment back.
func setControlPlaneGOGC(gogc int) (restore func()) {
	if gogc <= 0 {
		return func() {}
	}
	var undo []func()
	for k, v := range map[string]string{"GOGC": strconv.Itoa(gogc), "GOMEMLIMIT": "3GiB"} {
		old, had := os.LookupEnv(k)
		_ = os.Setenv(k, v)
		undo = append(undo, func() {
			if had {
				_ = os.Setenv(k, old)
			} else {
				_ = os.Unsetenv(k)
			}
		})
	}
	return func() {
		for _, u := range undo {
			u()
		}
	}
}

// startCluster starts controller-manager, scheduler and kwok, creates the
// kwok node and waits until it is Ready.
func (tb *Testbed) startCluster(ctx context.Context, assets string) error {
	stagesFile := filepath.Join(tb.Dir, "kwok-stages.yaml")
	if err := os.WriteFile(stagesFile, stages, 0o644); err != nil {
		return err
	}
	kc := tb.Kubeconfig
	ports, err := freePorts(3)
	if err != nil {
		return err
	}
	processes := []struct {
		name string
		args []string
	}{
		// Without the legacy Endpoints controller (the API is deprecated
		// since 1.33; serin, Flagger and kube-proxy's successors read
		// EndpointSlices): at a thousand Services it doubled the endpoint
		// writes the API server has to take. Without the EndpointSlice
		// controllers too: the testbed's Backends write the slices, with
		// the loopback addresses of the pods' real HTTP servers.
		{"kube-controller-manager", append(controllerManagerArgs(kc, ports[0],
			"*,-endpoints-controller,-endpointslice-controller,-endpointslice-mirroring-controller"),
			"--concurrent-deployment-syncs=10", "--concurrent-replicaset-syncs=10",
			// As kwokctl does for large fake clusters: the default 20 QPS
			// would make a thousand Deployments take minutes to roll.
			"--kube-api-qps=1000", "--kube-api-burst=2000",
		)},
		{"kube-scheduler", []string{
			"--kubeconfig=" + kc, "--authentication-kubeconfig=" + kc, "--authorization-kubeconfig=" + kc,
			"--leader-elect=false", "--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(ports[1]),
			"--kube-api-qps=1000", "--kube-api-burst=2000",
		}},
		{"kwok", []string{
			"--kubeconfig=" + kc, "--config=" + stagesFile,
			"--manage-all-nodes=false", "--manage-nodes-with-annotation-selector=" + kwokNodeAnnotation + "=fake",
			"--node-lease-duration-seconds=40", "--cidr=10.64.0.0/12",
			"--server-address=127.0.0.1:" + strconv.Itoa(ports[2]),
		}},
	}
	for _, p := range processes {
		if err := tb.startProcess(filepath.Join(assets, p.name), nil, p.args...); err != nil {
			return err
		}
	}
	if err := tb.createNode(ctx); err != nil {
		return err
	}
	backendsCtx, stopBackends := context.WithCancel(context.Background())
	tb.stopBackends = stopBackends
	tb.Backends, err = tb.startBackends(backendsCtx, tb.Config)
	return err
}

// controllerManagerArgs are kube-controller-manager's flags for the
// testbed's admin kubeconfig kc, serving on port, running controllers (its
// --controllers list).
func controllerManagerArgs(kc string, port int, controllers string) []string {
	return []string{
		"--kubeconfig=" + kc, "--authentication-kubeconfig=" + kc, "--authorization-kubeconfig=" + kc,
		"--controllers=" + controllers, "--leader-elect=false", "--use-service-account-credentials=false",
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(port),
		// A ResourceQuota's usage is recounted every 10 s (5 min by
		// default), so that a pod deletion the quota controller missed
		// under load is not counted for minutes.
		"--resource-quota-sync-period=10s",
	}
}

// StartControllers starts kube-controller-manager with only the named
// controllers (e.g. clusterrole-aggregation) on a testbed started without
// Full. It returns an error when the testbed's binaries have no
// kube-controller-manager.
func (tb *Testbed) StartControllers(controllers ...string) error {
	bin := filepath.Join(tb.assets, "kube-controller-manager")
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("no kube-controller-manager in %s (hack/testbed/assets.sh gathers it): %w", tb.assets, err)
	}
	ports, err := freePorts(1)
	if err != nil {
		return err
	}
	return tb.startProcess(bin, nil, controllerManagerArgs(tb.Kubeconfig, ports[0], strings.Join(controllers, ","))...)
}

// startProcess runs a binary with its output in DIR/NAME.log and extra
// environment variables.
func (tb *Testbed) startProcess(bin string, env []string, args ...string) error {
	_, err := tb.startCmd(bin, env, args...)
	return err
}

// startCmd is startProcess, returning the process.
func (tb *Testbed) startCmd(bin string, env []string, args ...string) (*exec.Cmd, error) {
	name := filepath.Base(bin)
	logFile, err := os.Create(filepath.Join(tb.Dir, name+".log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("failed to start %s: %w", name, err)
	}
	tb.track(cmd)
	return cmd, nil
}

// track adds a started process to those Stop stops and poll watches.
func (tb *Testbed) track(p *exec.Cmd) {
	tb.procsMu.Lock()
	defer tb.procsMu.Unlock()
	tb.procs = append(tb.procs, p)
}

// createNode registers the kwok node and waits for kwok to make it Ready.
func (tb *Testbed) createNode(ctx context.Context) error {
	c, err := client.New(tb.Config, client.Options{})
	if err != nil {
		return err
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        NodeName,
			Annotations: map[string]string{kwokNodeAnnotation: "fake", "node.alpha.kubernetes.io/ttl": "0"},
			Labels:      map[string]string{"kubernetes.io/hostname": NodeName, "kubernetes.io/os": "linux", "type": "kwok"},
		},
		Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("256Gi"),
				corev1.ResourcePods: resource.MustParse("10000"),
			},
			Capacity: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("256Gi"),
				corev1.ResourcePods: resource.MustParse("10000"),
			},
		},
	}
	if err := c.Create(ctx, node); err != nil {
		return fmt.Errorf("failed to create the kwok node: %w", err)
	}
	return tb.poll(ctx, fmt.Sprintf("kwok node %s Ready", NodeName), func() bool {
		if err := c.Get(ctx, client.ObjectKeyFromObject(node), node); err == nil {
			for _, cond := range node.Status.Conditions {
				if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
					return true
				}
			}
		}
		return false
	})
}

// poll calls done every 100 ms until it returns true, for a minute at most;
// a testbed process that exits meanwhile ends the wait with an error.
func (tb *Testbed) poll(ctx context.Context, what string, done func() bool) error {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if done() {
			return nil
		}
		if err := tb.exited(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("no %s after 1m; see the logs in %s", what, tb.Dir)
}

// exited returns an error naming a process that has already exited. A
// process stopped on purpose is forgotten before its signal, so it is
// never taken for one that failed.
func (tb *Testbed) exited() error {
	tb.procsMu.Lock()
	defer tb.procsMu.Unlock()
	for _, p := range tb.procs {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(p.Process.Pid, &ws, syscall.WNOHANG, nil)
		if err == nil && pid == p.Process.Pid {
			return fmt.Errorf("%s exited (%v); see %s", filepath.Base(p.Path), ws, filepath.Join(tb.Dir, filepath.Base(p.Path)+".log"))
		}
	}
	return nil
}

// Stop stops every process and the control plane.
func (tb *Testbed) Stop() error {
	if tb.stopBackends != nil {
		tb.stopBackends()
	}
	tb.procsMu.Lock()
	procs := tb.procs
	tb.procs = nil
	tb.procsMu.Unlock()
	for i := len(procs) - 1; i >= 0; i-- {
		stopProcess(procs[i])
	}
	if tb.env != nil {
		return tb.env.Stop()
	}
	return nil
}

// stopProcess stops a process started by startProcess: SIGTERM to its
// group, SIGKILL after 10 s.
func stopProcess(p *exec.Cmd) {
	_ = syscall.Kill(-p.Process.Pid, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = p.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-p.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

// stop stops one process of the testbed before the others.
func (tb *Testbed) stop(p *exec.Cmd) {
	if tb.forget(p) {
		stopProcess(p)
	}
}

// forget drops a process from those Stop stops and poll watches, and
// reports whether it was one of them: call it before stopping the
// process, so that no other test's poll reaps it as a failure.
func (tb *Testbed) forget(p *exec.Cmd) bool {
	tb.procsMu.Lock()
	defer tb.procsMu.Unlock()
	for i, q := range tb.procs {
		if q == p {
			tb.procs = append(tb.procs[:i], tb.procs[i+1:]...)
			return true
		}
	}
	return false
}

// freePorts returns n distinct loopback ports that are free now.
func freePorts(n int) ([]int, error) {
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
