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

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testbed"
)

// TestAgainstAPIServer runs the commands against a real kube-apiserver with
// serin's CRDs (envtest), through the kubeconfig loading of a real run: the
// field selectors, watches, generations and CRD validation that a fake
// client only imitates. It needs the envtest binaries ($KUBEBUILDER_ASSETS,
// set by make test).
func TestAgainstAPIServer(t *testing.T) {
	if testing.Short() || os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("needs a kube-apiserver: set KUBEBUILDER_ASSETS to the output of hack/testbed/assets.sh")
	}
	ctx := context.Background()
	kube, kubeconfig := startAPIServer(t)
	podinfo := makeCanary("apps", "podinfo").obj()
	mustCreate(t, kube, podinfo)
	mustCreate(t, kube, makeCanary("apps", "backend").obj())
	mustCreate(t, kube, canaryEvent("podinfo-started", "podinfo", podinfo.UID, time.Minute,
		corev1.EventTypeNormal, "Progressing", "New revision detected"))

	env := &environment{kubeconfig: genericclioptions.NewConfigFlags(false), now: time.Now, pollInterval: 50 * time.Millisecond}
	env.newClient = func() (client.WithWatch, error) { return newKubeClient(env.kubeconfig) }
	run := func(args ...string) commandRun {
		return runCommand(ctx, env, append([]string{"--kubeconfig", kubeconfig, "-n", "apps"}, args...)...)
	}

	t.Run("get canaries by name", func(t *testing.T) {
		got := run("get", "canaries", "podinfo", "--no-header")
		if got.err != nil || !strings.HasPrefix(got.stdout, "podinfo") || strings.Count(got.stdout, "\n") != 1 {
			t.Errorf("got %q, %v; want the podinfo row only", got.stdout, got.err)
		}
	})
	t.Run("get canary shows its events", func(t *testing.T) {
		got := run("get", "canary", "podinfo")
		if got.err != nil || !strings.Contains(got.stdout, "New revision detected") {
			t.Errorf("got %v and:\n%s", got.err, got.stdout)
		}
	})
	t.Run("suspend waits for the agent to handle it", func(t *testing.T) {
		agentCtx, stopAgent := context.WithCancel(ctx)
		defer stopAgent()
		go fakeAgent(agentCtx, kube, client.ObjectKeyFromObject(podinfo), func(c *v1alpha1.Canary) bool {
			requested, ok := meta.ReconcileAnnotationValue(c.GetAnnotations())
			changed := ok && c.Status.LastHandledReconcileAt != requested
			c.Status.SetLastHandledReconcileRequest(requested)
			return changed && c.Spec.Suspend
		})
		got := run("suspend", "podinfo", "--timeout", "10s")
		if got.err != nil || !strings.Contains(got.stderr, "serin handled the change") {
			t.Errorf("got %v and:\n%s", got.err, got.stderr)
		}
		got = run("resume", "podinfo", "--no-wait")
		if got.err != nil {
			t.Error(got.err)
		}
	})
	t.Run("promote is handled", func(t *testing.T) {
		agentCtx, stopAgent := context.WithCancel(ctx)
		defer stopAgent()
		go fakeAgent(agentCtx, kube, client.ObjectKeyFromObject(podinfo), handleRequests)
		if got := run("promote", "podinfo", "--timeout", "10s"); got.err != nil {
			t.Errorf("got %v and:\n%s", got.err, got.stderr)
		}
	})
	t.Run("watch prints changes", func(t *testing.T) {
		var stdout, stderr syncBuffer
		done := make(chan commandRun)
		go func() {
			done <- runCommandInto(ctx, env, &stdout, &stderr,
				"--kubeconfig", kubeconfig, "-n", "apps", "get", "canaries", "backend", "--watch", "--timeout", "3s")
		}()
		waitForLines(t, &stdout, 2)
		updateCanaryStatus(t, kube, client.ObjectKey{Namespace: "apps", Name: "backend"}, func(c *v1alpha1.Canary) {
			c.Status.Phase, c.Status.CanaryWeight = v1alpha1.PhaseProgressing, 10
		})
		waitForLines(t, &stdout, 3)
		if got := <-done; !strings.Contains(errorText(got.err), "stopped watching") ||
			!strings.Contains(got.stdout, "Progressing") {
			t.Errorf("got %v and:\n%s", got.err, got.stdout)
		}
	})
	t.Run("groups: listed, described, and promoted member by member", func(t *testing.T) {
		group := makeGroup("apps", "storefront", "podinfo", "backend").dependsOn("backend", "podinfo").obj()
		mustCreate(t, kube, group)
		group.Status.Phase = v1alpha1.PhaseProgressing
		group.Status.Release = &v1alpha1.GroupRelease{Revision: longRevision, Phase: v1alpha1.PhaseProgressing,
			Members: []v1alpha1.GroupReleaseMember{releaseMember("podinfo", v1alpha1.PhaseProgressing, 10, 1, "")}}
		if err := kube.Status().Update(ctx, group); err != nil {
			t.Fatal(err)
		}
		updateCanaryStatus(t, kube, client.ObjectKeyFromObject(podinfo), func(c *v1alpha1.Canary) {
			c.Status.Phase, c.Status.CanaryWeight = v1alpha1.PhaseProgressing, 10
			c.Status.Group = &v1alpha1.GroupStatus{Name: "storefront", Release: longRevision, StepsPassed: 1}
		})
		// backend did not change with the revision: the release is not its.
		updateCanaryStatus(t, kube, client.ObjectKey{Namespace: "apps", Name: "backend"}, func(c *v1alpha1.Canary) {
			c.Status.Phase, c.Status.CanaryWeight = v1alpha1.PhaseSucceeded, 0
		})

		if got := run("get", "groups", "storefront", "--no-header"); got.err != nil || !strings.HasPrefix(got.stdout, "storefront") ||
			!strings.Contains(got.stdout, "podinfo:Progressing(1)") {
			t.Errorf("get groups: %v\n%s", got.err, got.stdout)
		}
		if got := run("get", "canaries", "podinfo", "--no-header"); got.err != nil || !strings.HasPrefix(got.stdout, "podinfo\tstorefront") {
			t.Errorf("get canaries shows no group: %v\n%q", got.err, got.stdout)
		}
		if got := run("get", "group", "storefront"); got.err != nil || !strings.Contains(got.stdout, "backend (after podinfo)") ||
			!strings.Contains(got.stdout, "Sat out:   backend") {
			t.Errorf("get group: %v\n%s", got.err, got.stdout)
		}

		agentCtx, stopAgent := context.WithCancel(ctx)
		defer stopAgent()
		go fakeAgent(agentCtx, kube, client.ObjectKeyFromObject(podinfo), handleRequests)
		got := run("promote", "--group", "storefront", "--timeout", "10s")
		if got.err != nil || !strings.Contains(got.stderr, "ℹ Canary backend skipped") ||
			!strings.Contains(got.stderr, "✔ podinfo: promote request handled") {
			t.Errorf("promote --group: %v\n%s", got.err, got.stderr)
		}
	})
	t.Run("waves: the WAVE column, the Wave section and promote --to", func(t *testing.T) {
		frontend := makeCanary("apps", "frontend").stages("staging", "production").obj()
		mustCreate(t, kube, frontend)
		updateCanaryStatus(t, kube, client.ObjectKeyFromObject(frontend), func(c *v1alpha1.Canary) {
			c.Status = soakingCanary().obj().Status
		})

		if got := run("get", "canaries", "frontend"); got.err != nil ||
			!strings.Contains(got.stdout, "WAVE") || !strings.Contains(got.stdout, "staging: Succeeded, production: Soaking") {
			t.Errorf("get canaries: %v\n%s", got.err, got.stdout)
		}
		if got := run("get", "canary", "frontend"); got.err != nil ||
			!regexp.MustCompile(`\n  production:\s+Soaking`).MatchString(got.stdout) {
			t.Errorf("get canary: %v\n%s", got.err, got.stdout)
		}
		agentCtx, stopAgent := context.WithCancel(ctx)
		defer stopAgent()
		go fakeAgent(agentCtx, kube, client.ObjectKeyFromObject(frontend), handlePromoteTo)
		got := run("promote", "frontend", "--to", "production", "--timeout", "10s")
		if got.err != nil || !strings.Contains(got.stderr, "✔ promote request to production handled: Promoting") {
			t.Errorf("promote --to: %v\n%s", got.err, got.stderr)
		}
	})
	t.Run("-o json and -o yaml parse, with the computed columns", func(t *testing.T) {
		got := run("get", "canaries", "-o", "json")
		var canaries summaryList[canarySummary]
		if err := json.Unmarshal([]byte(got.stdout), &canaries); got.err != nil || err != nil {
			t.Fatalf("get canaries -o json: %v, %v:\n%s", got.err, err, got.stdout)
		}
		byName := map[string]canarySummary{}
		for _, item := range canaries.Items {
			byName[item.Name] = item
		}
		if p := byName["podinfo"]; p.Group != "storefront" || p.Object == nil || p.Object.Kind != v1alpha1.CanaryKind || p.Object.UID == "" {
			t.Errorf("podinfo: %+v", p)
		}
		if f := byName["frontend"]; len(f.Wave) != 2 || f.Wave[1].Stage != "production" || f.Wave[1].Phase == "" {
			t.Errorf("frontend's wave: %+v", f.Wave)
		}
		got = run("get", "group", "storefront", "-o", "yaml")
		var group groupSummary
		if err := yaml.Unmarshal([]byte(got.stdout), &group); got.err != nil || err != nil ||
			group.Revision != longRevision || len(group.Members) != 1 || group.Object.Kind != v1alpha1.CanaryGroupKind {
			t.Errorf("get group -o yaml: %v, %v, %+v", got.err, err, group)
		}
		got = run("get", "canaries", "-n", "test", "-o", "json")
		if got.err != nil || got.stdout != "{\n  \"items\": []\n}\n" || !strings.Contains(got.stderr, `no Canary objects found in "test" namespace`) {
			t.Errorf("an empty list: %v, %q, %q", got.err, got.stdout, got.stderr)
		}
	})
	t.Run("wait: the verdict of a revision, in the exit status", func(t *testing.T) {
		waited := makeCanary("apps", "waited").obj()
		mustCreate(t, kube, waited)
		key := client.ObjectKeyFromObject(waited)
		rollOut := func(revision string, phase v1alpha1.CanaryPhase, status metav1.ConditionStatus, message string) {
			updateCanaryStatus(t, kube, key, func(c *v1alpha1.Canary) {
				c.Status.ObservedGeneration = c.Generation
				c.Status.Phase, c.Status.LastAttemptedRevision = phase, revision
				c.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: status, Reason: string(phase), Message: message,
					LastTransitionTime: metav1.Now()}}
			})
		}
		rollOut(otherRevision, v1alpha1.PhaseSucceeded, metav1.ConditionTrue, "promoted")

		// The Canary sees the revision only after the command started.
		done := make(chan commandRun)
		go func() { done <- run("wait", "canary", "waited", "--revision", "5eed5eed", "--timeout", "20s") }()
		time.Sleep(200 * time.Millisecond)
		rollOut(waitedRevision, v1alpha1.PhaseProgressing, metav1.ConditionFalse, "advancing canary weight to 10")
		time.Sleep(200 * time.Millisecond)
		rollOut(waitedRevision, v1alpha1.PhaseSucceeded, metav1.ConditionTrue, "promotion completed")
		if got := <-done; got.err != nil || !strings.Contains(got.stderr, "◎ Progressing, revision main@sha1:5eed5eed") ||
			!strings.Contains(got.stderr, "✔ Canary waited in apps namespace succeeded") {
			t.Errorf("succeeded: exit %d, %v:\n%s", ExitCode(got.err), got.err, got.stderr)
		}

		rollOut(otherRevision, v1alpha1.PhaseFailed, metav1.ConditionFalse, "canary analysis failed: error-rate 1.5 > 1")
		if got := run("wait", "canary", "waited", "--timeout", "20s"); ExitCode(got.err) != ExitFailed ||
			!strings.Contains(errorText(got.err), "failed: Failed, revision main@sha1:0ddba11c: canary analysis failed: error-rate 1.5 > 1") {
			t.Errorf("failed: exit %d, %v", ExitCode(got.err), got.err)
		}
		rollOut(otherRevision, v1alpha1.PhaseProgressing, metav1.ConditionFalse, "advancing canary weight to 10")
		if got := run("wait", "canary", "waited", "--timeout", "500ms"); ExitCode(got.err) != ExitTimeout ||
			!strings.HasPrefix(errorText(got.err), "timed out after 500ms waiting for Canary waited in apps namespace: Progressing") {
			t.Errorf("timeout: exit %d, %v", ExitCode(got.err), got.err)
		}
		if got := run("wait", "canary", "nope", "--timeout", "2s"); ExitCode(got.err) != ExitCannotWait {
			t.Errorf("not found: exit %d, %v", ExitCode(got.err), got.err)
		}
	})
	t.Run("tree: the target and what the Canary controls, with their health", func(t *testing.T) {
		testTreeAgainstAPIServer(ctx, t, kube, run)
	})
	t.Run("check: what is installed, and the agent", func(t *testing.T) {
		testCheckAgainstAPIServer(ctx, t, kube, run)
	})
	t.Run("converted examples pass the CRD validation", func(t *testing.T) {
		for _, example := range []string{"bluegreen-kubernetes", "canary-gatewayapi", "builtin-metrics-webhooks", "past-serin-bounds"} {
			for _, object := range readManifests(t, filepath.Join("testdata", "convert", example+".out.yaml")) {
				switch object.GetObjectKind().GroupVersionKind().Group {
				case "notification.toolkit.fluxcd.io", "networking.istio.io":
					// This API server has serin's CRDs only: Flux's
					// Providers are applied to the testbed's in
					// e2e.TestConvert_Repositories; Istio runs nowhere here.
					continue
				}
				if err := kube.Create(ctx, object, client.DryRunAll); err != nil {
					t.Errorf("%s: %s %s: %v", example, object.GetKind(), object.GetName(), err)
				}
			}
		}
	})
}

// startAPIServer starts etcd and kube-apiserver with serin's CRDs and the
// Gateway API's, and the namespaces of the tests, and returns a client and
// an admin kubeconfig.
func startAPIServer(t *testing.T) (client.Client, string) {
	t.Helper()
	gatewayCRDs, err := testbed.GatewayAPICRDs(context.Background(), filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	tb, err := testbed.Start(context.Background(), testbed.Options{
		CRDDirs: []string{filepath.Join("..", "..", "config", "crd", "bases"), gatewayCRDs},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tb.Stop() })
	scheme := newScheme()
	utilruntime.Must(gatewayv1.Install(scheme))
	kube, err := client.New(tb.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	for _, namespace := range []string{"apps", "test", "flagger-system", "serin-system"} {
		mustCreate(t, kube, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})
	}
	return kube, tb.Kubeconfig
}

func mustCreate(t *testing.T, kube client.Client, object client.Object) {
	t.Helper()
	if err := kube.Create(context.Background(), object); err != nil {
		t.Fatal(err)
	}
}

func readManifests(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objects []*unstructured.Unstructured
	for {
		object := &unstructured.Unstructured{}
		if err := decoder.Decode(&object.Object); errors.Is(err, io.EOF) {
			return objects
		} else if err != nil {
			t.Fatal(err)
		}
		objects = append(objects, object)
	}
}
