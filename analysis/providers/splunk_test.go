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

package providers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// TestSplunk checks the wire format of the SignalFlow API's HTTP
// transport (POST /v2/signalflow/execute, start and stop in milliseconds
// over ten 1m intervals, immediate=true, X-SF-Token, the program as
// text/plain), since Splunk Observability Cloud cannot run here, and reads
// Server-Sent Event streams of the shape SignalFlow's stream messages
// reference gives (control-message, metadata, data, error).
func TestSplunk(t *testing.T) {
	query := "A = data('traces.count', filter=filter('sf_service', 'podinfo') and filter('sf_error', 'false')).sum().publish(enable=False)\n" +
		"B = data('traces.count', filter=filter('sf_service', 'podinfo')).sum().publish(enable=False)\n" +
		"(A/B*100).publish()\n"
	want := wireRequest{
		Method: http.MethodPost,
		Path:   "/v2/signalflow/execute",
		Query: url.Values{
			"start":     {strconv.FormatInt(testNow.UnixMilli()-600_000, 10)},
			"stop":      {strconv.FormatInt(testNow.UnixMilli(), 10)},
			"immediate": {"true"},
		},
		Header: map[string]string{"X-SF-Token": "sf-token", "Content-Type": "text/plain", "Accept": "text/event-stream"},
		Body:   query,
	}
	event := func(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }
	start := event("control-message", `{"event":"STREAM_START","timestampMs":1795435200100}`) +
		event("control-message", `{"event":"JOB_START","handle":"E1a2b3c4d5e","timestampMs":1795435200200}`) +
		event("metadata", `{"tsId":"AAAAAKzwo5I","properties":{"sf_isPreQuantized":false,"sf_type":"MetricTimeseries","sf_resolutionMs":60000}}`)
	data := func(ts int64, points string) string {
		return event("data", `{"logicalTimestampMs":`+strconv.FormatInt(ts, 10)+`,"data":[`+points+`]}`)
	}
	end := event("control-message", `{"event":"END_OF_CHANNEL","timestampMs":1795435200900}`)
	stream := func(body string) wireAnswer { return wireAnswer{ContentType: "text/event-stream", Body: body} }
	tests := map[string]providerCase{
		"the newest value": {
			answer: stream(start + data(1795434660000, `{"tsId":"AAAAAKzwo5I","value":99.5}`) +
				data(1795434720000, `{"tsId":"AAAAAKzwo5I","value":98.75}`) + end),
			want: 98.75,
		},
		"a data message over several lines": {
			answer: stream(start + "event: data\ndata: {\"logicalTimestampMs\":1795434660000,\ndata: \"data\":[{\"tsId\":\"AAAAAKzwo5I\",\"value\":12}]}\n\n" + end),
			want:   12,
		},
		"nothing after END_OF_CHANNEL is read": {
			answer: stream(start + data(1795434660000, `{"tsId":"AAAAAKzwo5I","value":1}`) + end +
				data(1795434720000, `{"tsId":"AAAAAKzwo5I","value":2}`)),
			want: 1,
		},
		"no data: no data": {answer: stream(start + end), wantErr: "no values found for query", wantNoData: true},
		"two time series": {
			answer: stream(start + data(1795434660000, `{"tsId":"AAAAAKzwo5I","value":1},{"tsId":"AAAAAIbc7Xk","value":2}`) + end),
			wantErr: "returned 2 series (AAAAAKzwo5I, AAAAAIbc7Xk); a metric check needs one number: " +
				"publish one stream, aggregated to one time series, e.g. .sum().publish()",
		},
		"a program error": {
			answer: stream(event("control-message", `{"event":"STREAM_START","timestampMs":1795435200100}`) +
				event("error", `{"errors":[{"code":"ANALYTICS_PROGRAM_NAME_ERROR","context":{"name":"dat"}}]}`)),
			wantErr: `splunk program failed: {"code":"ANALYTICS_PROGRAM_NAME_ERROR","context":{"name":"dat"}}`,
		},
		"an aborted channel": {
			answer: stream(start + event("control-message",
				`{"event":"CHANNEL_ABORT","timestampMs":1795435200300,"abortInfo":{"sf_job_abortReason":"Job limit reached","sf_job_abortState":"ABORTED"}}`)),
			wantErr: `splunk program was aborted: {"sf_job_abortReason":"Job limit reached"`,
		},
		"unauthorized": {
			answer:  wireAnswer{Status: http.StatusUnauthorized, ContentType: "application/json", Body: `{"code":401,"message":"Unauthorized"}`},
			wantErr: "answered 401: Unauthorized",
		},
	}
	runProviderCases(t, v1alpha1.MetricProvider{Type: v1alpha1.SplunkProvider},
		map[string]string{"sf_token_key": "sf-token"}, query, want, tests)
}

// Flagger's MetricTemplates name the realm's API; SignalFlow is on its
// stream host.
func TestSplunkStreamAddress(t *testing.T) {
	tests := map[string]string{
		"https://api.us1.signalfx.com":                  "https://stream.us1.signalfx.com",
		"https://api.eu0.signalfx.com/":                 "https://stream.eu0.signalfx.com/",
		"https://stream.us1.signalfx.com":               "https://stream.us1.signalfx.com",
		"https://api.us1.observability.splunkcloud.com": "https://stream.us1.observability.splunkcloud.com",
		"http://signalflow-proxy.monitoring:8080/api.x": "http://signalflow-proxy.monitoring:8080/api.x",
	}
	for in, want := range tests {
		if got := splunkStreamAddress(in); got != want {
			t.Errorf("splunkStreamAddress(%q) = %q, want %q", in, got, want)
		}
	}
}

// A stream that never ends is read up to maxProviderAnswer, then fails;
// the call's timeout bounds one that stalls.
func TestSplunk_EndlessStream(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		comment := ": " + strings.Repeat("x", 1000) + "\n"
		for range maxProviderAnswer/len(comment) + 2 {
			if _, err := w.Write([]byte(comment)); err != nil {
				return
			}
		}
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	p, err := New(Config{Spec: v1alpha1.MetricProvider{Type: v1alpha1.SplunkProvider, Address: srv.URL},
		Secret: map[string][]byte{"sf_token_key": []byte("t")}, Timeout: 5 * time.Second, Interval: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Query(context.Background(), "data('x').publish()")
	if want := "the answer is longer than 1048576 bytes"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want %q", err, want)
	}
}
