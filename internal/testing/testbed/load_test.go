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
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// The load sends at its rate to the Host it is given, stops at its bound,
// and counts answers by version and code as the client saw them.
func TestLoadCountsWhatTheClientSaw(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Host != "app.test" {
			t.Errorf("Host %q", r.Host)
		}
		i := n.Add(1)
		w.Header().Set(VersionHeader, map[bool]string{true: "v2", false: "v1"}[i%4 == 0])
		if i%10 == 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	start := time.Now()
	l := StartLoad(context.Background(), LoadOptions{URL: srv.URL, Host: "app.test", Rate: 200, Duration: 500 * time.Millisecond})
	time.Sleep(700 * time.Millisecond)
	l.Stop()
	c := l.Counts(start, time.Time{})
	if c.Total < 80 || c.Total > 101 {
		t.Errorf("%d requests in 0.5 s at 200/s", c.Total)
	}
	if c.ByCode[503] != c.Errors || c.Errors == 0 {
		t.Errorf("errors %d, by code %v", c.Errors, c.ByCode)
	}
	if c.ByVersion["v1"]+c.ByVersion["v2"] != c.Total {
		t.Errorf("by version %v of %d", c.ByVersion, c.Total)
	}
	if share := c.Share("v2"); share < 20 || share > 30 {
		t.Errorf("v2 share %.1f%%, want ~25%%", share)
	}
	if got := len(l.Samples(start, time.Time{})); got != c.Total {
		t.Errorf("%d samples, %d counted", got, c.Total)
	}
}

// A request that gets no answer counts as an error with code 0.
func TestLoadCountsTransportErrors(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	l := StartLoad(context.Background(), LoadOptions{URL: url, Rate: 50, Duration: 200 * time.Millisecond})
	time.Sleep(300 * time.Millisecond)
	l.Stop()
	c := l.Counts(time.Time{}, time.Time{})
	if c.Total == 0 || c.ByCode[0] != c.Total || c.Errors != c.Total {
		t.Errorf("counts %+v", c)
	}
}

// A load with paths spreads its requests among them by their shares, at
// random.
func TestLoadSpreadsItsPaths(t *testing.T) {
	var root, checkout atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			root.Add(1)
		case "/checkout":
			checkout.Add(1)
		default:
			t.Errorf("path %q", r.URL.Path)
		}
	}))
	defer srv.Close()
	l := StartLoad(context.Background(), LoadOptions{URL: srv.URL, Rate: 400, Duration: time.Second,
		Paths: []LoadPath{{Path: "/", Share: 4}, {Path: "/checkout", Share: 1}}})
	time.Sleep(1200 * time.Millisecond)
	l.Stop()
	total := root.Load() + checkout.Load()
	if share := 100 * float64(checkout.Load()) / float64(total); total < 200 || share < 12 || share > 28 {
		t.Errorf("/checkout had %d of %d requests (%.1f %%), want about 20 %%", checkout.Load(), total, share)
	}
}
