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

package controllers

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	helper "github.com/fluxcd/pkg/runtime/controller"
	"github.com/fluxcd/pkg/runtime/events"
	"github.com/fluxcd/pkg/runtime/metrics"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testbed"
)

// The envtest tier: the reconciler runs in-process against a real
// kube-apiserver and etcd, without controller-manager or kubelets, so tests
// set Deployment statuses themselves.
var (
	k8s    client.Client
	scheme = runtime.NewScheme()
)

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if testing.Short() {
		fmt.Println("controllers: -short: unit tests only, the envtest tests skip")
		return m.Run()
	}
	_ = clientgoscheme.AddToScheme(scheme)
	_ = v1alpha1.AddToScheme(scheme)
	_ = gatewayv1.Install(scheme)
	ctrl.SetLogger(zap.New(zap.UseDevMode(true), zap.WriteTo(io.Discard)))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	gatewayCRDs, err := testbed.GatewayAPICRDs(ctx, "..")
	if err != nil {
		fmt.Fprintln(os.Stderr, "envtest:", err)
		return 1
	}
	tb, err := testbed.Start(ctx, testbed.Options{CRDDirs: []string{filepath.Join("..", "config", "crd", "bases"), gatewayCRDs}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "envtest:", err)
		return 1
	}
	defer func() {
		cancel() // stop the manager's watches first, or the API server waits for them
		_ = tb.Stop()
	}()

	mgr, err := ctrl.NewManager(tb.Config, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
		return 1
	}
	recorder, err := events.NewRecorder(mgr, ctrl.Log, "", ControllerName)
	if err != nil {
		fmt.Fprintln(os.Stderr, "recorder:", err)
		return 1
	}
	r := &CanaryReconciler{
		Client:         mgr.GetClient(),
		EventRecorder:  recorder,
		Metrics:        helper.NewMetrics(mgr, metrics.MustMakeRecorder(), v1alpha1.CanaryFinalizer),
		ControllerName: ControllerName,
	}
	if err := r.SetupWithManager(ctx, mgr, CanaryReconcilerOptions{MaxConcurrentReconciles: 2}); err != nil {
		fmt.Fprintln(os.Stderr, "setup:", err)
		return 1
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager stopped:", err)
		}
	}()
	k8s, err = client.New(tb.Config, client.Options{Scheme: scheme})
	if err != nil {
		fmt.Fprintln(os.Stderr, "client:", err)
		return 1
	}
	return m.Run()
}
