// Command demo runs serin's main job on the embedded local testbed: it starts
// a real control plane (etcd, kube-apiserver, controller-manager, scheduler,
// kwok), builds and starts the serin agent, applies config/samples, and shows
// the Canary progress until it is Initialized. It tears everything down and
// exits non-zero when the canary does not end as expected.
//
//	make demo
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testbed"
)

const (
	sample    = "config/samples/podinfo.yaml"
	namespace = "demo"
	name      = "podinfo"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "✗ demo failed:", err)
		stop()
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	start := time.Now()
	step("starting the local testbed (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok)")
	tb, err := testbed.Start(ctx, testbed.Options{Full: true, CRDDirs: []string{"config/crd/bases"}})
	if err != nil {
		return err
	}
	defer func() {
		step("tearing the testbed down")
		_ = tb.Stop()
		_ = os.RemoveAll(tb.Dir)
	}()
	done("control plane up in %s; kubeconfig %s", since(start), tb.Kubeconfig)

	t := time.Now()
	step("building and starting the serin agent from this tree")
	if _, err := tb.StartAgent(ctx, "."); err != nil {
		return err
	}
	done("agent running in %s; log %s", since(t), filepath.Join(tb.Dir, "serin-agent.log"))

	c, err := newClient(tb)
	if err != nil {
		return err
	}
	step("applying " + sample + " (Namespace, Deployment podinfo with 2 replicas, Canary podinfo)")
	if err := applyFile(ctx, c, sample); err != nil {
		return err
	}

	t = time.Now()
	step("watching the canary: kubectl get canaries -n " + namespace)
	canary, err := watchUntilInitialized(ctx, c, tb.Kubeconfig, 2*time.Minute)
	if err != nil {
		return err
	}
	primary, target := &appsv1.Deployment{}, &appsv1.Deployment{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name + "-primary"}, primary); err != nil {
		return err
	}
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, target); err != nil {
		return err
	}
	done("canary %s/%s %s in %s: %s", namespace, name, canary.Status.Phase, since(t), conditions.GetMessage(canary, "Ready"))
	done("primary %s: %d/%d replicas available; target %s scaled to %d",
		primary.Name, primary.Status.AvailableReplicas, *primary.Spec.Replicas, target.Name, *target.Spec.Replicas)
	fmt.Printf("\nSummary: Initialized in %s, whole demo %s.\n", since(t), since(start))
	return nil
}

// watchUntilInitialized prints the canary table at every change until the
// canary is Initialized, and fails on Stalled or timeout.
func watchUntilInitialized(ctx context.Context, c client.Client, kubeconfig string, timeout time.Duration) (*v1alpha1.Canary, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	last := ""
	canary := &v1alpha1.Canary{}
	for {
		if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, canary); err == nil {
			table := getCanaries(ctx, kubeconfig)
			if table != last {
				fmt.Println(indent(table))
				last = table
			}
			switch {
			case canary.Status.Phase == v1alpha1.PhaseInitialized:
				return canary, nil
			case conditions.IsStalled(canary):
				return nil, fmt.Errorf("canary stalled: %s", conditions.GetMessage(canary, "Stalled"))
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("canary not Initialized after %s (phase %q)", timeout, canary.Status.Phase)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// getCanaries renders the canaries with kubectl when it is installed, or
// with a minimal table otherwise.
func getCanaries(ctx context.Context, kubeconfig string) string {
	cmd := exec.CommandContext(ctx, "kubectl", "get", "canaries", "-n", namespace)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	out, err := cmd.Output()
	if err == nil {
		return strings.TrimRight(string(out), "\n")
	}
	return "(kubectl not available: " + err.Error() + ")"
}

func newClient(tb *testbed.Testbed) (client.Client, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	return client.New(tb.Config, client.Options{Scheme: scheme})
}

// applyFile server-side applies every object of a multi-document YAML file.
func applyFile(ctx context.Context, c client.Client, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); err != nil {
			if errors.Is(err, os.ErrClosed) || err.Error() == "EOF" {
				return nil
			}
			return err
		}
		if len(obj.Object) == 0 {
			continue
		}
		if err := c.Patch(ctx, obj, client.Apply, client.FieldOwner("serin-demo"), client.ForceOwnership); err != nil {
			return fmt.Errorf("apply %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
		fmt.Printf("   %s/%s applied\n", strings.ToLower(obj.GetKind()), obj.GetName())
	}
}

func step(msg string)                 { fmt.Println("►", msg) }
func done(format string, args ...any) { fmt.Printf("✔ "+format+"\n", args...) }
func since(t time.Time) time.Duration { return time.Since(t).Round(10 * time.Millisecond) }
func indent(s string) string          { return "   " + strings.ReplaceAll(s, "\n", "\n   ") }
