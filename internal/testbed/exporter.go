package testbed

import (
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// TrafficExporter plays an application's request metrics: every 100 ms each
// app it knows serves 10 requests, a chosen percentage of them 5xx, and it
// exports the counters as http_requests_total{namespace,app,code} for
// Prometheus to scrape. Tests steer the error rate per app.
type TrafficExporter struct {
	// Addr is the host:port Prometheus scrapes.
	Addr string

	mu     sync.Mutex
	apps   map[string]int            // "namespace/app" → error percentage
	counts map[string]map[int]uint64 // "namespace/app" → code → requests
	srv    *http.Server
	stop   chan struct{}
}

// StartTrafficExporter serves the metrics on a free loopback port.
func StartTrafficExporter() (*TrafficExporter, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	e := &TrafficExporter{Addr: l.Addr().String(), apps: map[string]int{}, counts: map[string]map[int]uint64{}, stop: make(chan struct{})}
	e.srv = &http.Server{Handler: http.HandlerFunc(e.serveMetrics), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = e.srv.Serve(l) }()
	go e.generate()
	return e, nil
}

// SetErrorRate makes the app in namespace answer errorPercent % of its
// requests with 500 from now on.
func (e *TrafficExporter) SetErrorRate(namespace, app string, errorPercent int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	key := namespace + "/" + app
	e.apps[key] = errorPercent
	if e.counts[key] == nil {
		e.counts[key] = map[int]uint64{200: 0, 500: 0}
	}
}

// Stop stops serving and generating.
func (e *TrafficExporter) Stop() {
	close(e.stop)
	_ = e.srv.Close()
}

func (e *TrafficExporter) generate() {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-e.stop:
			return
		case <-t.C:
		}
		e.mu.Lock()
		for key, errPct := range e.apps {
			errs := uint64(errPct / 10)
			e.counts[key][500] += errs
			e.counts[key][200] += 10 - errs
		}
		e.mu.Unlock()
	}
}

func (e *TrafficExporter) serveMetrics(w http.ResponseWriter, _ *http.Request) {
	e.mu.Lock()
	defer e.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	fmt.Fprintln(w, "# TYPE http_requests_total counter")
	for key, codes := range e.counts {
		var ns, app string
		for i := range key {
			if key[i] == '/' {
				ns, app = key[:i], key[i+1:]
				break
			}
		}
		for code, n := range codes {
			fmt.Fprintf(w, "http_requests_total{namespace=%q,app=%q,code=\"%d\"} %d\n", ns, app, code, n)
		}
	}
}
