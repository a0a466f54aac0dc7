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
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// APIProxy is a loopback proxy in front of the testbed's API server that
// counts the requests passing through it by verb. A controller that does not
// export client-go's request metrics (Flagger) is given the proxy's
// kubeconfig, so that its API traffic is measured the same way whatever it
// registers.
type APIProxy struct {
	// Kubeconfig is a kubeconfig for the proxy: plain HTTP on loopback, the
	// proxy authenticates upstream as the testbed's admin.
	Kubeconfig string

	mu     sync.Mutex
	counts map[string]float64
	server *http.Server
}

// StartAPIProxy starts a counting proxy and writes its kubeconfig to
// DIR/NAME.kubeconfig.
func (tb *Testbed) StartAPIProxy(name string) (*APIProxy, error) {
	upstream, err := url.Parse(tb.Config.Host)
	if err != nil {
		return nil, err
	}
	transport, err := rest.TransportFor(tb.Config)
	if err != nil {
		return nil, err
	}
	p := &APIProxy{counts: map[string]float64{}}
	rp := httputil.NewSingleHostReverseProxy(upstream)
	rp.Transport = transport
	rp.FlushInterval = -1 // watches stream
	p.server = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.counts[Verb(r)]++
		p.mu.Unlock()
		rp.ServeHTTP(w, r)
	})}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	go func() { _ = p.server.Serve(l) }()

	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{Server: "http://" + l.Addr().String()}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	kc.CurrentContext = name
	p.Kubeconfig = filepath.Join(tb.Dir, name+".kubeconfig")
	if err := clientcmd.WriteToFile(*kc, p.Kubeconfig); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// Counts returns the number of requests so far by verb: get, list, watch,
// create, update, patch, delete.
func (p *APIProxy) Counts() map[string]float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]float64, len(p.counts))
	for k, v := range p.counts {
		out[k] = v
	}
	return out
}

// Close stops the proxy.
func (p *APIProxy) Close() { _ = p.server.Close() }

// Verb classifies an API request the way the API server's audit log does:
// a GET of one object is a get, of a collection a list, with watch=true a
// watch. Discovery (/api, /apis, /version) counts as get.
func Verb(r *http.Request) string {
	switch r.Method {
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		return "delete"
	case http.MethodGet:
	default:
		return strings.ToLower(r.Method)
	}
	if w := r.URL.Query().Get("watch"); w == "true" || w == "1" {
		return "watch"
	}
	if collection(r.URL.Path) {
		return "list"
	}
	return "get"
}

// collection reports whether an API path names a collection:
// /api/v1/RESOURCE, /api/v1/namespaces/NS/RESOURCE and the same under
// /apis/GROUP/VERSION.
func collection(path string) bool {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return false
	}
	if len(parts) >= 2 && parts[0] == "namespaces" && len(parts) != 2 {
		parts = parts[2:] // namespaced; /namespaces/NS alone is a get
	}
	return len(parts) == 1
}

// FormatCounts formats counts as verb=N pairs, in a fixed order.
func FormatCounts(c map[string]float64) string {
	var b strings.Builder
	for _, v := range []string{"get", "list", "watch", "create", "update", "patch", "delete"} {
		fmt.Fprintf(&b, " %s=%.2f", v, c[v])
	}
	return strings.TrimSpace(b.String())
}
