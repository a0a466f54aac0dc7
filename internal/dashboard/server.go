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

// Package dashboard is serin's local web dashboard (`serin dashboard`):
// the Canaries and their rollouts, updated live, with charts of each
// analysis step's weight and check values and the buttons of the CLI's
// promote, abort, retry and revert; and the CanaryGroups, each release's
// members side by side on one time line. It runs on the user's machine and
// reads and acts through the user's kubeconfig, with its permissions and
// no others.
//
// The server is an http.Handler over a controller-runtime client: one list
// and watch of the Canaries and one of the CanaryGroups (the hub) feed
// every open page through Server-Sent Events; the pages are plain HTML,
// CSS and JavaScript embedded in the binary.
package dashboard

import (
	"context"
	"crypto/rand"
	"embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net"
	"net/http"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

//go:embed web
var webFiles embed.FS

// Options configure a Server.
type Options struct {
	// Namespace limits the dashboard to one namespace; empty for all.
	Namespace string
	// Now is the clock of the requests' annotation values; time.Now when
	// nil.
	Now func() time.Time
	// Token is the secret the pages send with every request that changes
	// something; random when empty (tests set it).
	Token string
	// AccessToken, when set, is asked of every request, to read as to
	// act: the dashboard listens beyond loopback, where anyone who reaches
	// the port would otherwise read the page and its Token. A browser
	// brings it once as ?access_token= (the URL the CLI prints) and keeps
	// it in a cookie.
	AccessToken string
	// RetryDelay is how long the watch waits before listing again after
	// the API server refused or failed; 10 s when zero.
	RetryDelay time.Duration
	// Log receives a line for every request the pages make of the agent;
	// nothing when nil.
	Log io.Writer
}

// Server is the dashboard: its pages, its JSON API and its event stream.
type Server struct {
	kube    client.WithWatch
	opts    Options
	hub     *hub
	handler http.Handler
	page    *template.Template
}

// New returns the dashboard of the Canaries and CanaryGroups kube can see.
// Its pages stay empty until Run watches them.
func New(kube client.WithWatch, opts Options) (*Server, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.RetryDelay == 0 {
		opts.RetryDelay = 10 * time.Second
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.Token == "" {
		secret := make([]byte, 32)
		if _, err := rand.Read(secret); err != nil {
			return nil, fmt.Errorf("making the dashboard's token: %w", err)
		}
		opts.Token = base64.RawURLEncoding.EncodeToString(secret)
	}
	page, err := template.ParseFS(webFiles, "web/index.html")
	if err != nil {
		return nil, err
	}
	s := &Server{
		kube: kube,
		opts: opts,
		hub:  newHub(kube, opts.Namespace, opts.RetryDelay),
		page: page,
	}
	assets, err := fs.Sub(webFiles, "web")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.servePage)
	mux.HandleFunc("GET /canaries/{namespace}/{name}", s.servePage)
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(assets)))
	mux.HandleFunc("GET /api/canaries", s.listCanaries)
	mux.HandleFunc("GET /api/canaries/{namespace}/{name}", s.getCanary)
	mux.HandleFunc("GET /api/groups", s.listGroups)
	mux.HandleFunc("POST /api/canaries/{namespace}/{name}/{verb}", s.requestAction)
	mux.HandleFunc("GET /api/events", s.streamEvents)
	s.handler = s.guard(mux)
	return s, nil
}

// ServeHTTP serves the pages, the API and the event stream.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.handler.ServeHTTP(w, r)
}

// Run lists and watches the Canaries and CanaryGroups for the pages until
// ctx ends.
func (s *Server) Run(ctx context.Context) {
	s.hub.run(ctx)
}

// Serve runs the dashboard on l until ctx ends, then closes its
// connections, open event streams included.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go s.Run(ctx)
	server := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		// Event streams end with ctx, which is their requests' context.
		BaseContext: func(net.Listener) context.Context { return ctx },
	}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = server.Shutdown(shutdown)
	}()
	if err := server.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// pageData is what index.html is rendered with.
type pageData struct {
	Token     string
	Namespace string // empty for all namespaces
}

func (s *Server) servePage(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_ = s.page.Execute(w, pageData{Token: s.opts.Token, Namespace: s.opts.Namespace})
}

// writeJSON answers with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeProblem(w http.ResponseWriter, p problem) {
	writeJSON(w, p.Status, p)
}
