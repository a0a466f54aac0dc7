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
	"io"
	"math/rand/v2"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// LoadOptions configure a Load. The load is bounded in time and in count,
// and goes to loopback only (the testbed's Gateway).
type LoadOptions struct {
	// URL is where requests go (Traefik.URL plus a path).
	URL string
	// Host is the Host header: the HTTPRoute's hostname.
	Host string
	// Header is sent with every request, e.g. the header or cookie an A/B
	// test matches.
	Header http.Header
	// Rate is the number of requests per second; 100 when zero.
	Rate int
	// Duration bounds the load; 10m when zero.
	Duration time.Duration
	// Timeout bounds one request; 5s when zero.
	Timeout time.Duration
	// Paths, when set, sends each request to one of these paths (appended
	// to URL), picked at random by their shares: users who call several
	// endpoints of the app. Picked at random, not in turn: requests of a
	// path sent at a fixed rhythm keep in step with the data plane's
	// weighted round robin, and reach the canary always or never.
	Paths []LoadPath
	// GRPC sends gRPC calls instead of HTTP requests: the standard health
	// check grpc.health.v1.Health/Check over HTTP/2 without TLS to URL's
	// host and port, with Host as the authority (what a GRPCRoute's
	// hostnames match) and Header as metadata. Paths do not apply.
	GRPC bool
}

// LoadPath is one endpoint of the app the load calls, with its share of
// the requests (a weight, relative to the other paths').
type LoadPath struct {
	Path  string
	Share int
}

// url is the URL of the next request: a path picked by its share when
// the load has Paths.
func (l *Load) url() string {
	total := 0
	for _, p := range l.opts.Paths {
		total += p.Share
	}
	if total <= 0 {
		return l.opts.URL
	}
	n := rand.IntN(total)
	for _, p := range l.opts.Paths {
		if n -= p.Share; n < 0 {
			return l.opts.URL + p.Path
		}
	}
	return l.opts.URL
}

// Load is the app's users: requests at a steady rate through the data
// plane, each answer recorded with the version that served it (the app's
// X-App-Version header) and its status code, as the client sees it.
type Load struct {
	opts   LoadOptions
	client *http.Client
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	samples []Sample

	// health and closeConn are the gRPC client of a GRPC load.
	health    healthpb.HealthClient
	closeConn func() error
}

// Sample is one request as the client saw it.
type Sample struct {
	// Sent is when the request was sent.
	Sent time.Time
	// Version is the version that answered ("" when none did).
	Version string
	// Pod is the pod that answered (the app's X-App-Pod header): it tells
	// apart two workloads of one version, a primary and a baseline.
	Pod string
	// Tag is the TagHeader the app received ("" when none).
	Tag string
	// Code is the HTTP status, 0 for a transport error or timeout. A gRPC
	// call's is 200 for the code OK, 503 for UNAVAILABLE (a pod's injected
	// error, or no backend), 504 for DEADLINE_EXCEEDED and 500 for any
	// other code; GRPCCode is its code.
	Code     int
	GRPCCode codes.Code
}

// OK is true for a 2xx answer.
func (s Sample) OK() bool { return s.Code >= 200 && s.Code < 300 }

// StartLoad starts sending requests until Stop, ctx's end or the bound.
func StartLoad(ctx context.Context, opts LoadOptions) *Load {
	if opts.Rate <= 0 {
		opts.Rate = 100
	}
	if opts.Duration <= 0 {
		opts.Duration = 10 * time.Minute
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Duration)
	l := &Load{
		opts: opts,
		client: &http.Client{
			Timeout:   opts.Timeout,
			Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true},
			// The app never redirects; a redirect is an answer to count.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		cancel: cancel,
		done:   make(chan struct{}),
	}
	if opts.GRPC {
		conn, err := grpc.NewClient(strings.TrimPrefix(opts.URL, "http://"),
			grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithAuthority(opts.Host))
		if err != nil {
			panic(fmt.Sprintf("testbed: gRPC load on %s: %v", opts.URL, err)) // the address is the testbed's own
		}
		l.health = healthpb.NewHealthClient(conn)
		l.closeConn = conn.Close
	}
	go l.run(ctx)
	return l
}

func (l *Load) run(ctx context.Context) {
	defer close(l.done)
	var inflight sync.WaitGroup
	defer inflight.Wait()
	// At most this many requests in flight: a slow app slows the load
	// down instead of piling up goroutines.
	slots := make(chan struct{}, 256)
	tick := time.NewTicker(time.Second / time.Duration(l.opts.Rate))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		select {
		case slots <- struct{}{}:
		default:
			continue
		}
		inflight.Add(1)
		go func() {
			defer func() { <-slots; inflight.Done() }()
			if l.health != nil {
				l.record(l.call(ctx))
				return
			}
			l.record(l.send(ctx))
		}()
	}
}

func (l *Load) send(ctx context.Context) Sample {
	s := Sample{Sent: time.Now()}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.url(), nil)
	if err != nil {
		return s
	}
	req.Host = l.opts.Host
	for name, values := range l.opts.Header {
		req.Header[name] = values
	}
	resp, err := l.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return Sample{} // stopped, not an answer
		}
		return s
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	s.Code, s.Version, s.Pod, s.Tag = resp.StatusCode, resp.Header.Get(VersionHeader), resp.Header.Get(PodHeader), resp.Header.Get(TagHeader)
	return s
}

func (l *Load) record(s Sample) {
	if s.Sent.IsZero() {
		return
	}
	l.mu.Lock()
	l.samples = append(l.samples, s)
	l.mu.Unlock()
}

// call is send for a gRPC load.
func (l *Load) call(parent context.Context) Sample {
	s := Sample{Sent: time.Now()}
	ctx, cancel := context.WithTimeout(parent, l.opts.Timeout)
	defer cancel()
	for name, values := range l.opts.Header {
		for _, v := range values {
			ctx = metadata.AppendToOutgoingContext(ctx, name, v)
		}
	}
	var header metadata.MD
	_, err := l.health.Check(ctx, &healthpb.HealthCheckRequest{}, grpc.Header(&header))
	if end, bounded := parent.Deadline(); err != nil && (parent.Err() != nil || (bounded && !time.Now().Before(end))) {
		return Sample{} // stopped or at the load's end (the call's own deadline may fire first), not an answer
	}
	s.GRPCCode = status.Code(err)
	switch s.GRPCCode {
	case codes.OK:
		s.Code = http.StatusOK
	case codes.Unavailable:
		s.Code = http.StatusServiceUnavailable
	case codes.DeadlineExceeded:
		s.Code = http.StatusGatewayTimeout
	default:
		s.Code = http.StatusInternalServerError
	}
	first := func(key string) string {
		if v := header.Get(key); len(v) > 0 {
			return v[0]
		}
		return ""
	}
	s.Version, s.Pod, s.Tag = first(VersionHeader), first(PodHeader), first(TagHeader)
	return s
}

// Stop stops the load and waits for the requests in flight.
func (l *Load) Stop() {
	l.cancel()
	<-l.done
	if l.closeConn != nil {
		_ = l.closeConn()
	}
}

// Counts are the answers of a window of the load.
type Counts struct {
	// Total is the number of requests sent in the window.
	Total int
	// Errors is the number of answers that were not 2xx (transport errors
	// included).
	Errors int
	// ByVersion and ByCode count the answers by version and status code
	// (0: transport error).
	ByVersion map[string]int
	ByCode    map[int]int
	// ByTag counts the answers by the TagHeader the app received ("" for
	// none).
	ByTag map[string]int
}

// Share is the percentage of the window's requests that version answered.
func (c Counts) Share(version string) float64 {
	if c.Total == 0 {
		return 0
	}
	return 100 * float64(c.ByVersion[version]) / float64(c.Total)
}

// Counts counts the requests sent in [from, to); a zero to means now.
func (l *Load) Counts(from, to time.Time) Counts {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := Counts{ByVersion: map[string]int{}, ByCode: map[int]int{}, ByTag: map[string]int{}}
	for _, s := range l.samples {
		if s.Sent.Before(from) || (!to.IsZero() && !s.Sent.Before(to)) {
			continue
		}
		c.Total++
		c.ByCode[s.Code]++
		if s.Version != "" {
			c.ByVersion[s.Version]++
		}
		if s.OK() {
			c.ByTag[s.Tag]++
		}
		if !s.OK() {
			c.Errors++
		}
	}
	return c
}

// Samples returns the samples sent in [from, to) in the order sent.
func (l *Load) Samples(from, to time.Time) []Sample {
	l.mu.Lock()
	var out []Sample
	for _, s := range l.samples {
		if !s.Sent.Before(from) && (to.IsZero() || s.Sent.Before(to)) {
			out = append(out, s)
		}
	}
	l.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Sent.Before(out[j].Sent) })
	return out
}
