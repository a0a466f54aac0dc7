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
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"

	"github.com/serin-dev/serin/internal/outbound"
)

// The Secret keys of a CloudWatch provider: those of the AWS shared
// credentials file (~/.aws/credentials). Flagger has none: it uses the
// AWS identity of its own pod.
const (
	awsAccessKeyIDSecretKey     = "aws_access_key_id"
	awsSecretAccessKeySecretKey = "aws_secret_access_key"
	awsSessionTokenSecretKey    = "aws_session_token"
)

// CloudWatch's GetMetricData in the AWS JSON 1.0 protocol, which
// CloudWatch accepts besides the AWS Query protocol
// (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/cloudwatch-protocols-faq.html).
const (
	cloudWatchTarget      = "GraniteServiceVersion20100801.GetMetricData"
	cloudWatchContentType = "application/x-amz-json-1.0"
	// cloudWatchSigningName is CloudWatch's name in the signature's scope.
	cloudWatchSigningName = "monitoring"
	// cloudWatchMaxDatapoints is Flagger's MaxDatapoints: the newest come
	// first, so a longer answer is never read.
	cloudWatchMaxDatapoints = 20
	// cloudWatchMaxQueries is GetMetricData's limit on MetricDataQueries.
	cloudWatchMaxQueries = 500
)

// cloudWatch queries Amazon CloudWatch's GetMetricData.
type cloudWatch struct {
	httpProvider
	region string
	creds  awsCredentials
}

func newCloudWatchProvider(cfg Config) (Provider, error) {
	if cfg.Spec.Region == "" {
		return nil, errors.New("the cloudwatch provider needs provider.region")
	}
	keys, err := requireSecretKeys(cfg, awsAccessKeyIDSecretKey, awsSecretAccessKeySecretKey)
	if err != nil {
		return nil, err
	}
	return &cloudWatch{
		httpProvider: newHTTPProvider(cfg),
		region:       cfg.Spec.Region,
		creds: awsCredentials{AccessKeyID: keys[0], SecretAccessKey: keys[1],
			SessionToken: string(cfg.Secret[awsSessionTokenSecretKey])},
	}, nil
}

// cloudWatchQuery is one of GetMetricData's MetricDataQueries, with all
// its fields, so that a misspelt one is refused rather than dropped.
type cloudWatchQuery struct {
	ID         string                `json:"Id"`
	Expression string                `json:"Expression,omitempty"`
	MetricStat *cloudWatchMetricStat `json:"MetricStat,omitempty"`
	Label      string                `json:"Label,omitempty"`
	ReturnData *bool                 `json:"ReturnData,omitempty"`
	Period     *int64                `json:"Period,omitempty"`
	AccountID  string                `json:"AccountId,omitempty"`
}

// cloudWatchMetricStat is a MetricDataQuery's MetricStat.
type cloudWatchMetricStat struct {
	Metric cloudWatchMetric `json:"Metric"`
	Period int64            `json:"Period"`
	Stat   string           `json:"Stat"`
	Unit   string           `json:"Unit,omitempty"`
}

// cloudWatchMetric is the metric of a MetricStat.
type cloudWatchMetric struct {
	Namespace  string                `json:"Namespace,omitempty"`
	MetricName string                `json:"MetricName,omitempty"`
	Dimensions []cloudWatchDimension `json:"Dimensions,omitempty"`
}

// cloudWatchDimension is a dimension of a metric.
type cloudWatchDimension struct {
	Name  string `json:"Name"`
	Value string `json:"Value"`
}

// cloudWatchRequest is GetMetricData's input; the times are in seconds
// since the epoch, as AWS JSON 1.0 writes timestamps.
type cloudWatchRequest struct {
	MetricDataQueries []cloudWatchQuery `json:"MetricDataQueries"`
	StartTime         int64             `json:"StartTime"`
	EndTime           int64             `json:"EndTime"`
	MaxDatapoints     int               `json:"MaxDatapoints"`
	ScanBy            string            `json:"ScanBy"`
}

// cloudWatchMessage is a message of GetMetricData's answer.
type cloudWatchMessage struct {
	Code  string `json:"Code"`
	Value string `json:"Value"`
}

// cloudWatchAnswer is the part of GetMetricData's output serin reads.
type cloudWatchAnswer struct {
	MetricDataResults []struct {
		ID         string              `json:"Id"`
		Label      string              `json:"Label"`
		Timestamps []float64           `json:"Timestamps"`
		Values     []awsDouble         `json:"Values"`
		StatusCode string              `json:"StatusCode"`
		Messages   []cloudWatchMessage `json:"Messages"`
	} `json:"MetricDataResults"`
	Messages []cloudWatchMessage `json:"Messages"`
}

// cloudWatchError is an AWS JSON 1.0 error: its type, often with a
// namespace ("com.amazon.coral.service#AccessDeniedException"), and its
// message, spelt either way.
type cloudWatchError struct {
	Type         string `json:"__type"`
	Message      string `json:"message"`
	MessageUpper string `json:"Message"`
}

// awsDouble is a double of AWS JSON 1.0: a number, or "NaN", "Infinity"
// or "-Infinity".
type awsDouble float64

func (d *awsDouble) UnmarshalJSON(b []byte) error {
	var special string
	if json.Unmarshal(b, &special) == nil {
		switch special {
		case "NaN":
			*d = awsDouble(math.NaN())
		case "Infinity":
			*d = awsDouble(math.Inf(1))
		case "-Infinity":
			*d = awsDouble(math.Inf(-1))
		default:
			return fmt.Errorf("%q is not a number", special)
		}
		return nil
	}
	var v float64
	err := json.Unmarshal(b, &v)
	*d = awsDouble(v)
	return err
}

// Query sends query, a JSON array of MetricDataQueries, to GetMetricData
// over the last ten check intervals, as Flagger does, and returns the
// newest datapoint of the one query whose ReturnData is true (or unset).
// No datapoint, or NaN, is no data; several queries that return data
// fail the check (Flagger read the first).
func (p *cloudWatch) Query(ctx context.Context, query string) (float64, error) {
	queries, err := parseCloudWatchQueries(query)
	if err != nil {
		return 0, err
	}
	from, to := p.window()
	body, err := json.Marshal(cloudWatchRequest{
		MetricDataQueries: queries,
		StartTime:         from.Unix(),
		EndTime:           to.Unix(),
		MaxDatapoints:     cloudWatchMaxDatapoints,
		ScanBy:            "TimestampDescending",
	})
	if err != nil {
		return 0, fmt.Errorf("cloudwatch: %w", err)
	}
	header := http.Header{"Content-Type": {cloudWatchContentType}, "X-Amz-Target": {cloudWatchTarget}}
	call, err := p.call(http.MethodPost, nil, header)
	if err != nil {
		return 0, err
	}
	call.Body = body
	if err := signSigV4(call.Method, call.URL, call.Header, body, p.creds, p.region, cloudWatchSigningName, p.now()); err != nil {
		return 0, fmt.Errorf("cloudwatch: %w", err)
	}
	answer, err := p.send(ctx, call)
	if err != nil {
		return 0, err
	}
	if !answer.OK() {
		var e cloudWatchError
		_ = json.Unmarshal(answer.Body, &e)
		return 0, call.refused(answer, e.String())
	}
	var r cloudWatchAnswer
	if err := call.decodeJSON(answer, &r); err != nil {
		return 0, err
	}
	return r.value(query)
}

// parseCloudWatchQueries reads a MetricTemplate's query: a JSON array of
// MetricDataQueries, field names in any case as Flagger reads them, one
// or more of which return data.
func parseCloudWatchQueries(query string) ([]cloudWatchQuery, error) {
	decoder := json.NewDecoder(strings.NewReader(query))
	decoder.DisallowUnknownFields()
	var queries []cloudWatchQuery
	if err := decoder.Decode(&queries); err != nil {
		return nil, fmt.Errorf("cloudwatch query %q is not a JSON array of MetricDataQueries: %w", query, err)
	}
	if decoder.More() {
		return nil, fmt.Errorf("cloudwatch query %q has more than one JSON array", query)
	}
	if len(queries) == 0 || len(queries) > cloudWatchMaxQueries {
		return nil, fmt.Errorf("cloudwatch query %q has %d MetricDataQueries: GetMetricData takes 1 to %d", query, len(queries), cloudWatchMaxQueries)
	}
	returned := 0
	for i, q := range queries {
		if q.ID == "" {
			return nil, fmt.Errorf("cloudwatch query %q: MetricDataQuery %d has no Id", query, i)
		}
		if q.ReturnData == nil || *q.ReturnData {
			returned++
		}
	}
	if returned == 0 {
		return nil, fmt.Errorf("cloudwatch query %q: every MetricDataQuery has ReturnData false: one must return the number to check", query)
	}
	return queries, nil
}

// value is the newest datapoint of the answer's one result.
func (r *cloudWatchAnswer) value(query string) (float64, error) {
	switch len(r.MetricDataResults) {
	case 0:
		return 0, &ErrNoData{Query: query}
	case 1:
	default:
		var ids []string
		for _, result := range r.MetricDataResults {
			ids = append(ids, result.ID)
		}
		return 0, severalSeries(query, ids, "set ReturnData to false on all MetricDataQueries but the one to check")
	}
	result := r.MetricDataResults[0]
	if result.StatusCode == "Forbidden" || result.StatusCode == "InternalError" {
		return 0, fmt.Errorf("cloudwatch query %q: result %s is %s%s", query, result.ID, result.StatusCode,
			cloudWatchMessages(append(result.Messages, r.Messages...)))
	}
	if len(result.Values) == 0 {
		return 0, &ErrNoData{Query: query}
	}
	if len(result.Timestamps) != len(result.Values) {
		return 0, fmt.Errorf("cloudwatch query %q: result %s has %d values and %d timestamps", query, result.ID,
			len(result.Values), len(result.Timestamps))
	}
	newest := 0
	for i, t := range result.Timestamps {
		if t > result.Timestamps[newest] {
			newest = i
		}
	}
	v := float64(result.Values[newest])
	switch {
	case math.IsNaN(v):
		return 0, &ErrNoData{Query: query, NaN: true}
	case math.IsInf(v, 0):
		return 0, fmt.Errorf("query %q returned %v, not a finite number: it passes no thresholdRange", query, v)
	}
	return v, nil
}

// cloudWatchMessages writes messages after a colon: ": Code: value; …".
func cloudWatchMessages(messages []cloudWatchMessage) string {
	var parts []string
	for _, m := range messages {
		parts = append(parts, strings.TrimPrefix(m.Code+": "+m.Value, ": "))
	}
	if len(parts) == 0 {
		return ""
	}
	return ": " + outbound.Excerpt([]byte(strings.Join(parts, "; ")))
}

// String is the error's type without its namespace, and its message:
// "AccessDeniedException: User: … is not authorized".
func (e cloudWatchError) String() string {
	name := e.Type
	if i := strings.LastIndex(name, "#"); i >= 0 {
		name = name[i+1:]
	}
	name, _, _ = strings.Cut(name, ":")
	message := e.Message
	if message == "" {
		message = e.MessageUpper
	}
	switch {
	case name == "":
		return message
	case message == "":
		return name
	}
	return name + ": " + message
}
