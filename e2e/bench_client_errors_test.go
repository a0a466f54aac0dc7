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

package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testbed"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// clientErrorRun is what the users of one broken promotion saw.
type clientErrorRun struct {
	contender string
	// ended is the phase the contender ended in, and took the time from
	// the release to it.
	ended string
	took  time.Duration
	users testbed.Counts
	// lastVersion is the version that answered the users' last request.
	lastVersion string
}

// BenchmarkClientErrors counts, at the client, the errors of the seed case
// of Flagger #1898 on the same data plane (Traefik, Gateway API weights):
// a revision passes its analysis, then its primary never becomes ready; the
// app rolls out with the Recreate strategy, so the primary's old pods go
// away when the promotion starts. Users send 50 requests/s through the
// Gateway from the release until 15 s after the contender ended the
// rollout (serin Halted; Flagger Failed). Each of serin, Flagger v1.44.0
// (which keeps the canary on a failed promotion, its fix for #1898) and
// Flagger v1.36.1 runs it once.
//
//	SERIN_BENCH_FLAGGER=false runs serin alone.
func BenchmarkClientErrors(b *testing.B) {
	ctx := context.Background()
	runs := []clientErrorRun{}
	r, err := clientErrorsOnce(ctx, serinGatewayContender())
	if err != nil {
		b.Fatal(err)
	}
	runs = append(runs, r)
	if os.Getenv("SERIN_BENCH_FLAGGER") != "false" {
		for _, key := range []string{"FLAGGER_VERSION", "FLAGGER_PREVIOUS_VERSION"} {
			version, err := testbed.Version("..", key)
			if err != nil {
				b.Fatal(err)
			}
			f, err := env.StartFlagger(ctx, "..", testbed.FlaggerOptions{Version: version, Provider: "gatewayapi:v1", QPS: 500, Burst: 1000})
			if err != nil {
				b.Fatal(err)
			}
			r, err := clientErrorsOnce(ctx, flaggerGatewayContender(f))
			f.Stop()
			if err != nil {
				b.Fatal(err)
			}
			runs = append(runs, r)
		}
	}
	fmt.Printf("\nCLIENT ERRORS (primary fails during promotion, Recreate strategy; Traefik, Gateway API weights; 50 req/s until 15 s after the end)\n")
	fmt.Printf("%-16s %-8s %8s %9s %8s %8s  %s\n", "", "ENDS", "TOOK", "REQUESTS", "ERRORS", "ERROR%", "USERS' LAST ANSWER FROM")
	for _, r := range runs {
		fmt.Printf("%-16s %-8s %7.1fs %9d %8d %7.2f%%  %s\n", r.contender, r.ended, r.took.Seconds(), r.users.Total, r.users.Errors,
			100*float64(r.users.Errors)/float64(max(1, r.users.Total)), r.lastVersion)
	}
	for _, r := range runs {
		fmt.Printf("client_errors contender=%s ended=%s requests=%d client_errors=%d error_percent=%.2f last_version=%s\n",
			strings.ReplaceAll(r.contender, " ", "-"), r.ended, r.users.Total, r.users.Errors,
			100*float64(r.users.Errors)/float64(max(1, r.users.Total)), r.lastVersion)
	}
}

// gatewayContender creates a contender's Canary on the testbed's Gateway
// for the Deployment name: one step to 50%, then the promotion.
type gatewayContender struct {
	contender
	gatewayCanary func(ctx context.Context, ns, name, host string) error
}

func serinGatewayContender() gatewayContender {
	c := serinContender()
	return gatewayContender{contender: c, gatewayCanary: func(ctx context.Context, ns, name, host string) error {
		routing := gatewayRouting(ns)
		routing.Hosts = []string{host}
		return k8s.Create(ctx, testobj.MakeCanary(name, ns).ProgressDeadlineSeconds(10).Routing(routing).Analysis(v1alpha1.CanaryAnalysis{
			Interval: &metav1.Duration{Duration: 10 * time.Second}, Threshold: 2, StepWeight: 50, MaxWeight: 50,
		}).Obj())
	}}
}

func flaggerGatewayContender(f *testbed.Flagger) gatewayContender {
	c := flaggerContender(f)
	c.name = "Flagger " + f.Version
	return gatewayContender{contender: c, gatewayCanary: func(ctx context.Context, ns, name, host string) error {
		u := &unstructured.Unstructured{Object: map[string]any{
			"metadata": map[string]any{"name": name, "namespace": ns},
			"spec": map[string]any{
				"provider":                "gatewayapi:v1",
				"progressDeadlineSeconds": int64(10),
				"targetRef":               map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
				"service": map[string]any{
					"port": int64(appPort), "targetPort": int64(appPort), "hosts": []any{host},
					"gatewayRefs": []any{map[string]any{"name": testbed.GatewayName, "namespace": testbed.GatewayNamespace}},
				},
				"analysis": map[string]any{"interval": "10s", "threshold": int64(2), "stepWeight": int64(50), "maxWeight": int64(50)},
			},
		}}
		u.SetGroupVersionKind(flaggerGVK)
		return k8s.Create(ctx, u)
	}}
}

// clientErrorsOnce plays the broken promotion once for a contender.
func clientErrorsOnce(ctx context.Context, c gatewayContender) (clientErrorRun, error) {
	name := "app"
	ns := fmt.Sprintf("bench-errors-%s-%d", strings.ToLower(strings.Fields(c.name)[0]), time.Now().UnixNano()%100000)
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return clientErrorRun{}, err
	}
	defer func() { _ = k8s.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}) }()
	run := clientErrorRun{contender: c.name}

	target := testobj.MakeDeployment(name, ns).Replicas(2).Image("app:v1").ProgressDeadlineSeconds(10).Obj()
	target.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	if err := k8s.Create(ctx, target); err != nil {
		return run, err
	}
	host := ns + ".serin.test"
	if err := c.gatewayCanary(ctx, ns, name, host); err != nil {
		return run, err
	}
	if _, err := waitPhase(ctx, c.contender, ns, name, 2*time.Minute, "Initialized"); err != nil {
		return run, err
	}
	users := testbed.StartLoad(ctx, testbed.LoadOptions{URL: gateway.URL + "/", Host: host, Rate: 50, Duration: 5 * time.Minute})
	defer users.Stop()
	// The route is programmed and the primary answers before the release.
	deadline := time.Now().Add(30 * time.Second)
	for lastVersion(users) != "v1" {
		if time.Now().After(deadline) {
			return run, fmt.Errorf("%s: the users never reached v1 through the Gateway: %+v", c.name, users.Counts(time.Time{}, time.Time{}))
		}
		time.Sleep(100 * time.Millisecond)
	}
	released := time.Now()
	if err := rollBrokenPrimary(ctx, ns, name, "app:v2"); err != nil {
		return run, err
	}
	ended, err := waitPhase(ctx, c.contender, ns, name, 3*time.Minute, c.haltedPhase)
	if err != nil {
		return run, err
	}
	run.ended, run.took = c.haltedPhase, ended.Sub(released)
	time.Sleep(15 * time.Second)
	run.users = users.Counts(released, time.Now().Add(-time.Second))
	if run.lastVersion = lastVersion(users); run.lastVersion == "" {
		run.lastVersion = "none" // the last request got no answer from the app
	}
	return run, nil
}
