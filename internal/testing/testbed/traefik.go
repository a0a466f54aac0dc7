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
	"path/filepath"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

const (
	// GatewayNamespace and GatewayName name the Gateway the testbed's
	// Traefik programs; Canaries attach their HTTPRoutes to it.
	GatewayNamespace = "gateways"
	GatewayName      = "public"
	// GatewayClassName is Traefik's GatewayClass.
	GatewayClassName = "traefik"
	// TraefikControllerName is the controllerName Traefik's Gateway API
	// provider answers to.
	TraefikControllerName = "traefik.io/gateway-controller"
)

// Traefik is a real Gateway API data plane on loopback (Traefik v3 with its
// kubernetesGateway provider): it programs the testbed's Gateway and every
// HTTPRoute attached to it, sends requests to the pods' backends through
// the EndpointSlices, and exports per-backend Prometheus metrics
// (traefik_service_requests_total{service="NS-SVC-http-PORT@kubernetesgateway"}).
type Traefik struct {
	// URL is the Gateway's listener: send requests here with the route's
	// hostname as Host.
	URL string
	// MetricsAddr is the host:port of Traefik's Prometheus metrics
	// (/metrics), for Prometheus to scrape.
	MetricsAddr string
}

// StartTraefik starts Traefik (binary in assets), creates its GatewayClass
// and the Gateway GatewayNamespace/GatewayName listening on the URL it
// returns, and waits until Traefik accepted the Gateway. The Gateway API
// CRDs must be installed.
func (tb *Testbed) StartTraefik(ctx context.Context, assets string) (*Traefik, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(tb.Dir, "traefik")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	web, metrics := "127.0.0.1:"+strconv.Itoa(ports[0]), "127.0.0.1:"+strconv.Itoa(ports[1])
	// The standard channel only: the experimental one expects CRDs newer
	// than the gateway-api module serin builds with. No throttle, so a
	// weight serin writes is in force within ~100 ms.
	config := fmt.Sprintf(`global:
  checkNewVersion: false
  sendAnonymousUsage: false
log:
  level: INFO
entryPoints:
  web:
    address: %q
  metrics:
    address: %q
providers:
  providersThrottleDuration: 0s
  kubernetesGateway:
    experimentalChannel: false
metrics:
  prometheus:
    entryPoint: metrics
    addEntryPointsLabels: true
    addRoutersLabels: true
    addServicesLabels: true
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]
ping:
  entryPoint: metrics
`, web, metrics)
	configFile := filepath.Join(dir, "traefik.yml")
	if err := os.WriteFile(configFile, []byte(config), 0o644); err != nil {
		return nil, err
	}
	if err := tb.startProcess(filepath.Join(assets, "traefik"), []string{"KUBECONFIG=" + tb.Kubeconfig},
		"--configfile="+configFile); err != nil {
		return nil, err
	}
	if err := tb.waitReady(ctx, "http://"+metrics+"/ping"); err != nil {
		return nil, err
	}
	if err := tb.createGateway(ctx, int32(ports[0])); err != nil {
		return nil, err
	}
	return &Traefik{URL: "http://" + web, MetricsAddr: metrics}, nil
}

// createGateway creates Traefik's GatewayClass and a Gateway whose HTTP
// listener is Traefik's web entrypoint (Traefik maps listeners to
// entrypoints by port), open to routes of every namespace, and waits until
// Traefik accepts it.
func (tb *Testbed) createGateway(ctx context.Context, port int32) error {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = gatewayv1.Install(scheme)
	c, err := client.New(tb.Config, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	objs := []client.Object{
		&gatewayv1.GatewayClass{
			ObjectMeta: metav1.ObjectMeta{Name: GatewayClassName},
			Spec:       gatewayv1.GatewayClassSpec{ControllerName: TraefikControllerName},
		},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: GatewayNamespace}},
		&gatewayv1.Gateway{
			ObjectMeta: metav1.ObjectMeta{Namespace: GatewayNamespace, Name: GatewayName},
			Spec: gatewayv1.GatewaySpec{
				GatewayClassName: GatewayClassName,
				Listeners: []gatewayv1.Listener{{
					Name:     "web",
					Port:     port,
					Protocol: gatewayv1.HTTPProtocolType,
					AllowedRoutes: &gatewayv1.AllowedRoutes{
						Namespaces: &gatewayv1.RouteNamespaces{From: ptr.To(gatewayv1.NamespacesFromAll)},
					},
				}},
			},
		},
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			return fmt.Errorf("failed to create %T %s: %w", o, o.GetName(), err)
		}
	}
	gw := &gatewayv1.Gateway{}
	return tb.poll(ctx, fmt.Sprintf("Accepted and Programmed gateway %s/%s (see %s)", GatewayNamespace, GatewayName,
		filepath.Join(tb.Dir, "traefik.log")), func() bool {
		return c.Get(ctx, client.ObjectKey{Namespace: GatewayNamespace, Name: GatewayName}, gw) == nil &&
			apimeta.IsStatusConditionTrue(gw.Status.Conditions, string(gatewayv1.GatewayConditionAccepted)) &&
			apimeta.IsStatusConditionTrue(gw.Status.Conditions, string(gatewayv1.GatewayConditionProgrammed))
	})
}
