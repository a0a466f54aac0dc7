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
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// profileWindow captures CPU profiles of the agent and of kube-apiserver
// over d, into SERIN_BENCH_PROFILE (a directory) named by prefix, when that
// variable is set: where a step's time goes, on both sides of the write.
// Read them with `go tool pprof -top DIR/PREFIX-agent.pprof`. It returns a
// function that waits for the profiles.
func profileWindow(prefix string, d time.Duration) func() {
	dir := os.Getenv("SERIN_BENCH_PROFILE")
	if dir == "" {
		return func() {}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Println("  profile:", err)
		return func() {}
	}
	secs := fmt.Sprintf("%d", int(d.Seconds()))
	var wg sync.WaitGroup
	save := func(name string, get func() (io.ReadCloser, error)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body, err := get()
			if err != nil {
				fmt.Printf("  profile %s: %v\n", name, err)
				return
			}
			defer body.Close()
			path := filepath.Join(dir, prefix+"-"+name+".pprof")
			f, err := os.Create(path)
			if err != nil {
				fmt.Printf("  profile %s: %v\n", name, err)
				return
			}
			defer f.Close()
			if _, err := io.Copy(f, body); err != nil {
				fmt.Printf("  profile %s: %v\n", name, err)
				return
			}
			fmt.Printf("  profile %s: %s\n", name, path)
		}()
	}
	save("agent", func() (io.ReadCloser, error) {
		url := strings.TrimSuffix(agent.MetricsURL, "/metrics") + "/debug/pprof/profile?seconds=" + secs
		resp, err := http.Get(url)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return nil, fmt.Errorf("%s: %s", url, resp.Status)
		}
		return resp.Body, nil
	})
	save("apiserver", func() (io.ReadCloser, error) {
		cfg := rest.CopyConfig(env.Config)
		cfg.Timeout = d + time.Minute
		hc, err := rest.HTTPClientFor(cfg)
		if err != nil {
			return nil, err
		}
		resp, err := hc.Get(strings.TrimSuffix(cfg.Host, "/") + "/debug/pprof/profile?seconds=" + secs)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return nil, fmt.Errorf("kube-apiserver pprof: %s", resp.Status)
		}
		return resp.Body, nil
	})
	return wg.Wait
}

// apiserverMetrics scrapes kube-apiserver's own metrics.
func apiserverMetrics() (metricsText, error) {
	cfg := rest.CopyConfig(env.Config)
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Get(strings.TrimSuffix(cfg.Host, "/") + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("kube-apiserver metrics: %s", resp.Status)
	}
	return parseMetrics(resp.Body)
}

// apiserverCost prints what the API server spent on a contender's Canary
// status writes between two scrapes of its metrics (serin patches the
// status, Flagger updates it): the request's latency, its wait in API
// Priority and Fairness, etcd's update latency and the size of a Canary
// watch event; and the API server's CPU over the window (cores, from
// /proc) and per step, everything it did included.
func apiserverCost(who string, n int, steps, cores, seconds float64, before, after metricsText) {
	delta := func(name, sel string) float64 { return after.sumLabels(name, sel) - before.sumLabels(name, sel) }
	avg := func(name, sel string, scale float64) float64 {
		return scale * delta(name+"_sum", sel) / max(delta(name+"_count", sel), 1)
	}
	const status = `resource="canaries",subresource="status"`
	var writes, sum float64
	var verbs []string
	for _, verb := range []string{"PATCH", "PUT"} {
		sel := status + `,verb="` + verb + `"`
		if c := delta("apiserver_request_duration_seconds_count", sel); c > 0 {
			writes += c
			sum += delta("apiserver_request_duration_seconds_sum", sel)
			verbs = append(verbs, verb)
		}
	}
	fmt.Printf("apiserver contender=%s canaries=%d status_write_verbs=%s status_write_avg_ms=%.1f status_writes=%.0f apf_wait_avg_ms=%.1f etcd_update_avg_ms=%.1f canary_watch_event_avg_bytes=%.0f apiserver_cpu_cores=%.2f apiserver_cpu_ms_per_step=%.1f\n",
		who, n, strings.Join(verbs, "+"), 1000*sum/max(writes, 1), writes,
		avg("apiserver_flowcontrol_request_wait_duration_seconds", `execute="true"`, 1000),
		avg("etcd_request_duration_seconds", `operation="update"`, 1000),
		avg("apiserver_watch_events_sizes", `resource="canaries"`, 1),
		cores, 1000*cores*seconds/max(steps, 1))
}

// printAPIServerWrites prints the writes the API server took between two
// scrapes of its metrics, by resource[/subresource] and verb, divided by
// per (the canaries, or the steps): who writes what, serin, the
// controller-manager or kwok.
//
//	apiserver_writes phase=init contender=serin canaries=2000 per=canary deployments.POST=2.00 pods/status.PATCH=…
func printAPIServerWrites(who, phase string, n int, per string, div float64, before, after metricsText) {
	counts := deltasBy("apiserver_request_total", before, after, func(labels string) string {
		verb := seriesLabel(labels, "verb")
		switch verb {
		case "POST", "PUT", "PATCH", "APPLY", "DELETE", "DELETECOLLECTION":
		default:
			return ""
		}
		what := seriesLabel(labels, "resource")
		if sub := seriesLabel(labels, "subresource"); sub != "" {
			what += "/" + sub
		}
		what += "." + verb
		if code := seriesLabel(labels, "code"); code != "" && code[0] != '2' {
			// Refused writes count apart (a 409 is a conflict).
			what += "." + code
		}
		return what
	})
	printCounts(fmt.Sprintf("apiserver_writes phase=%s contender=%s canaries=%d per=%s", phase, who, n, per), counts, div)
}

// printStatusWrites prints the agent's reconciles that changed a Canary's
// status, by the action decided (serin_canary_status_writes_total), per
// per: which work the status patches are for.
func printStatusWrites(phase string, n int, per string, div float64, before, after metricsText) {
	counts := deltasBy("serin_canary_status_writes_total", before, after, func(labels string) string {
		if seriesLabel(labels, "failed") == "true" {
			return seriesLabel(labels, "action") + ".failed"
		}
		return seriesLabel(labels, "action")
	})
	printCounts(fmt.Sprintf("status_writes phase=%s canaries=%d per=%s", phase, n, per), counts, div)
}

// printNotifications prints what the agents' notifier did between two
// scrapes: the Canary events delivered (here to Flux's notification-
// controller, the agent's --events-addr), failed after their retries, and
// dropped because a delivery queue was full, and the events still queued
// at the second scrape.
func printNotifications(phase string, n int, per string, div float64, before, after metricsText) {
	d := deltasBy("serin_notification_events_total", before, after, func(labels string) string { return seriesLabel(labels, "result") })
	fmt.Printf("notifications phase=%s canaries=%d delivered=%.0f failed=%.0f dropped=%.0f queued=%.0f per_%s=%.2f\n",
		phase, n, d["delivered"], d["failed"], d["dropped"], after.sumLabel("serin_notification_events_queued", ""), per,
		(d["delivered"]+d["failed"]+d["dropped"])/max(div, 1))
}

// deltasBy sums the growth of the series of metric name between two
// scrapes by the key keyOf gives their labels; a series keyed "" is left out.
func deltasBy(name string, before, after metricsText, keyOf func(labels string) string) map[string]float64 {
	counts := map[string]float64{}
	for series, v := range after {
		base, labels, _ := strings.Cut(series, "{")
		if base != name {
			continue
		}
		if k := keyOf(labels); k != "" {
			counts[k] += v - before[series]
		}
	}
	return counts
}

// seriesLabel returns the value of a label of a series' labels (the text
// between its braces).
func seriesLabel(labels, name string) string {
	// Anchored: "resource" is not the tail of "subresource".
	_, rest, ok := strings.Cut(","+labels, ","+name+`="`)
	if !ok {
		return ""
	}
	value, _, _ := strings.Cut(rest, `"`)
	return value
}

// printCounts prints a line of key=value counts divided by div, the
// largest first, leaving out those under 0.01.
func printCounts(prefix string, counts map[string]float64, div float64) {
	keys := make([]string, 0, len(counts))
	for k, v := range counts {
		if v/max(div, 1) >= 0.01 {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return counts[keys[i]] > counts[keys[j]] })
	var b strings.Builder
	b.WriteString(prefix)
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%.2f", k, counts[k]/max(div, 1))
	}
	fmt.Println(b.String())
}

// printWindowEvents prints the Kubernetes Events of ns first stamped from
// from to to (to the second), by the component that reported them and
// their reason, per step. An Event is stamped when its recorder takes it,
// which on a saturated API server can be minutes before the recorder's
// one sink writes it: the line says which Events the window made, and
// apiserver_writes' events.POST which ones were written in it.
//
//	events_window contender=serin canaries=2000 per=step serin/Halted=0.01 …
func printWindowEvents(ctx context.Context, who string, n int, ns string, from, to time.Time, steps float64) {
	var events corev1.EventList
	if err := k8s.List(ctx, &events, client.InNamespace(ns)); err != nil {
		fmt.Println("  events:", err)
		return
	}
	from = from.Truncate(time.Second)
	counts := map[string]float64{}
	for _, e := range events.Items {
		first := e.FirstTimestamp.Time
		if first.IsZero() {
			first = e.EventTime.Time
		}
		if first.Before(from) || first.After(to) {
			continue
		}
		by := e.ReportingController
		if by == "" {
			by = e.Source.Component
		}
		counts[by+"/"+e.Reason]++
	}
	printCounts(fmt.Sprintf("events_window contender=%s canaries=%d per=step", who, n), counts, steps)
}
