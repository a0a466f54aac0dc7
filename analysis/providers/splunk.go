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
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/serin-dev/serin/internal/outbound"
)

// splunkTokenSecretKey is Flagger's Secret key of a Splunk Observability
// Cloud access token.
const splunkTokenSecretKey = "sf_token_key"

// splunk runs a SignalFlow program on Splunk Observability Cloud (formerly
// SignalFx) with the SignalFlow API's HTTP transport
// (POST /v2/signalflow/execute), which answers with Server-Sent Events.
type splunk struct {
	httpProvider
	token string
}

func newSplunkProvider(cfg Config) (Provider, error) {
	keys, err := requireSecretKeys(cfg, splunkTokenSecretKey)
	if err != nil {
		return nil, err
	}
	p := &splunk{httpProvider: newHTTPProvider(cfg), token: keys[0]}
	p.address = splunkStreamAddress(p.address)
	return p, nil
}

// splunkStreamAddress is the SignalFlow address of a realm's API address:
// Flagger's MetricTemplates name https://api.REALM.signalfx.com, and
// SignalFlow is served by https://stream.REALM.signalfx.com. Any other
// address is kept.
func splunkStreamAddress(address string) string {
	u, err := url.Parse(address)
	if err != nil {
		return address
	}
	if rest, ok := strings.CutPrefix(u.Host, "api."); ok {
		u.Host = "stream." + rest
		return u.String()
	}
	return address
}

// signalFlowEvent is one Server-Sent Event of a computation: its name is
// the message type, its data a JSON object.
type signalFlowEvent struct {
	name string
	data []byte
}

// signalFlowMessage is the part of a message serin reads, whatever its
// type: control messages (event), data messages (data), error messages
// (errors).
type signalFlowMessage struct {
	Event     string          `json:"event"`
	AbortInfo json.RawMessage `json:"abortInfo"`
	Data      []struct {
		TSID  string   `json:"tsId"`
		Value *float64 `json:"value"`
	} `json:"data"`
	Errors []json.RawMessage `json:"errors"`
}

// Query runs the program over the last ten check intervals, at once
// (immediate), and returns the newest non-null value of the one time
// series it publishes. No value is no data; values of several time series
// fail the check (Flagger refuses them too). The answer is read up to the
// computation's END_OF_CHANNEL, and at most maxProviderAnswer of it.
func (p *splunk) Query(ctx context.Context, query string) (float64, error) {
	from, to := p.window()
	params := url.Values{
		"start":     {strconv.FormatInt(from.UnixMilli(), 10)},
		"stop":      {strconv.FormatInt(to.UnixMilli(), 10)},
		"immediate": {"true"},
	}
	header := http.Header{"Accept": {"text/event-stream"}, "Content-Type": {"text/plain"}, "X-SF-Token": {p.token}}
	call, err := p.call(http.MethodPost, params, header, "v2", "signalflow", "execute")
	if err != nil {
		return 0, err
	}
	call.Body = []byte(query)
	values := &signalFlowValues{latest: map[string]float64{}}
	err = p.stream(ctx, call, func(status int, body io.Reader) error {
		if status != http.StatusOK {
			b, _ := outbound.ReadAtMost(body, maxProviderAnswer)
			var r struct {
				Message string `json:"message"`
			}
			_ = json.Unmarshal(b, &r)
			return call.refused(&providerAnswer{Status: status, Body: b}, r.Message)
		}
		return readServerSentEvents(&boundedReader{r: body, left: maxProviderAnswer + 1}, func(e signalFlowEvent) (bool, error) {
			return values.add(call, e)
		})
	})
	if err != nil {
		return 0, err
	}
	switch len(values.order) {
	case 0:
		return 0, &ErrNoData{Query: query}
	case 1:
		return values.latest[values.order[0]], nil
	}
	return 0, severalSeries(query, values.order, "publish one stream, aggregated to one time series, e.g. .sum().publish()")
}

// signalFlowValues are the newest values of a computation's time series,
// by tsId, in the order they came.
type signalFlowValues struct {
	latest map[string]float64
	order  []string
}

// add reads one message of the computation: data adds values; an error
// message or an aborted channel fails the query; END_OF_CHANNEL ends it.
func (v *signalFlowValues) add(call *providerCall, e signalFlowEvent) (done bool, err error) {
	var m signalFlowMessage
	if err := json.Unmarshal(e.data, &m); err != nil {
		return false, fmt.Errorf("splunk at %s sent a %s message that is not JSON: %q", outbound.Redact(call.Address),
			outbound.Excerpt([]byte(e.name)), outbound.Excerpt(e.data))
	}
	switch e.name {
	case "error":
		var errs []string
		for _, raw := range m.Errors {
			errs = append(errs, string(raw))
		}
		return false, fmt.Errorf("splunk program failed: %s", outbound.Excerpt([]byte(strings.Join(errs, "; "))))
	case "control-message":
		switch m.Event {
		case "CHANNEL_ABORT":
			return false, fmt.Errorf("splunk program was aborted: %s", outbound.Excerpt(m.AbortInfo))
		case "END_OF_CHANNEL":
			return true, nil
		}
	case "data":
		for _, d := range m.Data {
			if d.Value == nil {
				continue
			}
			if _, seen := v.latest[d.TSID]; !seen {
				v.order = append(v.order, d.TSID)
			}
			v.latest[d.TSID] = *d.Value
		}
	}
	return false, nil
}

// readServerSentEvents reads a text/event-stream body and hands each
// event to handle until it is done: "event:" names an event, its "data:"
// lines are its data, a blank line ends it; comments (":") and other
// fields are skipped.
func readServerSentEvents(body io.Reader, handle func(signalFlowEvent) (done bool, err error)) error {
	var current signalFlowEvent
	var data [][]byte
	dispatch := func() (bool, error) {
		if data == nil {
			return false, nil
		}
		current.data = bytes.Join(data, []byte("\n"))
		done, err := handle(current)
		current, data = signalFlowEvent{}, nil
		return done, err
	}
	scanner := bufio.NewScanner(body)
	scanner.Buffer(make([]byte, 0, 64<<10), maxProviderAnswer)
	for scanner.Scan() {
		line := scanner.Bytes()
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch {
		case len(line) == 0:
			if done, err := dispatch(); done || err != nil {
				return err
			}
		case string(field) == "event":
			current.name = string(value)
		case string(field) == "data":
			data = append(data, slices.Clone(value))
		}
	}
	if err := scanner.Err(); err != nil {
		return fmt.Errorf("reading the splunk answer: %w", outbound.RedactError(err))
	}
	_, err := dispatch()
	return err
}

// boundedReader reads r and fails with a *outbound.TooLargeError past
// maxProviderAnswer bytes: a stream is read as it comes, not as a whole.
type boundedReader struct {
	r    io.Reader
	left int64
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	if b.left <= 0 {
		return n, &outbound.TooLargeError{Limit: maxProviderAnswer}
	}
	return n, err
}
