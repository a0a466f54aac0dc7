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
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// cloudWatchTestQuery is Flagger's documented CloudWatch example: an
// error rate, m1 / m2, of which only the expression returns data.
const cloudWatchTestQuery = `[
  {"Id": "e1", "Expression": "m1 / m2", "Label": "ErrorRate"},
  {"Id": "m1", "MetricStat": {"Metric": {"Namespace": "MyKubernetesCluster", "MetricName": "ErrorCount",
    "Dimensions": [{"Name": "appName", "Value": "podinfo.apps"}]}, "Period": 60, "Stat": "Sum", "Unit": "Count"}, "ReturnData": false},
  {"Id": "m2", "MetricStat": {"Metric": {"Namespace": "MyKubernetesCluster", "MetricName": "RequestCount",
    "Dimensions": [{"Name": "appName", "Value": "podinfo.apps"}]}, "Period": 60, "Stat": "Sum", "Unit": "Count"}, "ReturnData": false}
]`

// The test's AWS key.
var cloudWatchTestCreds = awsCredentials{AccessKeyID: "AKIAIOSFODNN7EXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}

// TestCloudWatch checks the wire format of CloudWatch's GetMetricData in
// the AWS JSON 1.0 protocol, since CloudWatch cannot run here: an HTTP
// server checks the request exactly (POST /, the target and content type,
// the JSON input over ten 1m intervals, X-Amz-Date from the test clock,
// X-Amz-Security-Token, and the Signature Version 4 Authorization header,
// recomputed here from the request it received), and answers as the API
// reference documents.
func TestCloudWatch(t *testing.T) {
	wantBody := `{"MetricDataQueries": [
	    {"Id": "e1", "Expression": "m1 / m2", "Label": "ErrorRate"},
	    {"Id": "m1", "MetricStat": {"Metric": {"Namespace": "MyKubernetesCluster", "MetricName": "ErrorCount",
	      "Dimensions": [{"Name": "appName", "Value": "podinfo.apps"}]}, "Period": 60, "Stat": "Sum", "Unit": "Count"}, "ReturnData": false},
	    {"Id": "m2", "MetricStat": {"Metric": {"Namespace": "MyKubernetesCluster", "MetricName": "RequestCount",
	      "Dimensions": [{"Name": "appName", "Value": "podinfo.apps"}]}, "Period": 60, "Stat": "Sum", "Unit": "Count"}, "ReturnData": false}],
	  "StartTime": ` + strconv.FormatInt(testNow.Unix()-600, 10) + `, "EndTime": ` + strconv.FormatInt(testNow.Unix(), 10) + `,
	  "MaxDatapoints": 20, "ScanBy": "TimestampDescending"}`
	result := func(values, timestamps string) string {
		return `{"Id": "e1", "Label": "ErrorRate", "StatusCode": "Complete", "Messages": [], "Timestamps": ` + timestamps + `, "Values": ` + values + `}`
	}
	answer := func(results ...string) wireAnswer {
		return wireAnswer{ContentType: "application/x-amz-json-1.0",
			Body: `{"MetricDataResults": [` + strings.Join(results, ",") + `], "Messages": []}`}
	}
	newest, older := testNow.Add(-time.Minute).Unix(), testNow.Add(-2*time.Minute).Unix()
	stamps := "[" + strconv.FormatInt(newest, 10) + "," + strconv.FormatInt(older, 10) + "]"
	tests := map[string]providerCase{
		"the newest datapoint": {answer: answer(result(`[0.25, 0.5]`, stamps)), want: 0.25},
		"the newest datapoint, in ascending order": {
			answer: answer(result(`[0.5, 0.25]`, "["+strconv.FormatInt(older, 10)+","+strconv.FormatInt(newest, 10)+"]")),
			want:   0.25,
		},
		"no datapoint: no data": {answer: answer(result(`[]`, `[]`)), wantErr: "no values found for query", wantNoData: true},
		"no result: no data":    {answer: answer(), wantErr: "no values found for query", wantNoData: true},
		"NaN: no data":          {answer: answer(result(`["NaN", 1]`, stamps)), wantErr: "returned NaN", wantNoData: true},
		"Infinity":              {answer: answer(result(`["Infinity"]`, "["+strconv.FormatInt(newest, 10)+"]")), wantErr: "not a finite number"},
		"several results": {
			answer:  answer(result(`[1]`, `[1]`), strings.Replace(result(`[2]`, `[1]`), `"e1"`, `"e2"`, 1)),
			wantErr: "returned 2 series (e1, e2); a metric check needs one number: set ReturnData to false on all MetricDataQueries but the one to check",
		},
		"a forbidden result": {
			answer: answer(`{"Id": "e1", "StatusCode": "Forbidden", "Timestamps": [], "Values": [],
			  "Messages": [{"Code": "Forbidden", "Value": "no access to account 111122223333"}]}`),
			wantErr: "result e1 is Forbidden: Forbidden: no access to account 111122223333",
		},
		"access denied": {
			answer: wireAnswer{Status: http.StatusBadRequest, ContentType: "application/x-amz-json-1.0",
				Body: `{"__type": "com.amazon.coral.service#AccessDeniedException", "Message": "User: arn:aws:iam::111122223333:user/serin is not authorized to perform: cloudwatch:GetMetricData"}`},
			wantErr: "answered 400: AccessDeniedException: User: arn:aws:iam::111122223333:user/",
		},
		"an invalid query": {
			answer: wireAnswer{Status: http.StatusBadRequest, ContentType: "application/x-amz-json-1.0",
				Body: `{"__type": "com.amazonaws.cloudwatch#InvalidParameterValueException", "message": "The value m3 for parameter MetricDataQueries is not valid."}`},
			wantErr: "answered 400: InvalidParameterValueException: The value m3 for parameter",
		},
		"throttled, not JSON": {
			answer:  wireAnswer{Status: http.StatusServiceUnavailable, ContentType: "text/html", Body: "<html>Service Unavailable</html>"},
			wantErr: "answered 503: <html>Service Unavailable</html>",
		},
	}
	for _, sessionToken := range []string{"", "FwoGZXIvYXdzEXAMPLE//token+with/slashes=="} {
		for name, tc := range tests {
			if sessionToken != "" {
				name += ", with a session token"
			}
			t.Run(name, func(t *testing.T) {
				creds := cloudWatchTestCreds
				creds.SessionToken = sessionToken
				srv := cloudWatchServer(t, creds, wantBody, tc.answer)
				p := newTestCloudWatch(t, srv.URL, creds)
				v, err := p.Query(context.Background(), cloudWatchTestQuery)
				checkQueryResult(t, v, err, tc)
			})
		}
	}
}

// newTestCloudWatch is a CloudWatch provider of region us-east-1 at
// address, with creds, the test clock and a 1m interval.
func newTestCloudWatch(t *testing.T, address string, creds awsCredentials) Provider {
	t.Helper()
	secret := map[string][]byte{"aws_access_key_id": []byte(creds.AccessKeyID), "aws_secret_access_key": []byte(creds.SecretAccessKey)}
	if creds.SessionToken != "" {
		secret["aws_session_token"] = []byte(creds.SessionToken)
	}
	p, err := New(Config{
		Spec:   v1alpha1.MetricProvider{Type: v1alpha1.CloudWatchProvider, Region: "us-east-1", Address: address},
		Secret: secret, SecretName: "apps/aws", Timeout: 5 * time.Second, Interval: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	setTestClock(p)
	return p
}

// cloudWatchServer is a fake CloudWatch: a request that is not the
// GetMetricData that CloudWatch expects, signed with creds at the test
// clock and with wantBody (compared as JSON; any body when empty), fails
// the test and gets a 400; every other gets answer.
func cloudWatchServer(t *testing.T, creds awsCredentials, wantBody string, answer wireAnswer) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		type request struct {
			Method, Path, RawQuery string
			Header                 map[string]string
			Body                   any
		}
		header := func(r *http.Request) map[string]string {
			h := map[string]string{}
			for _, name := range []string{"Content-Type", "X-Amz-Target", "X-Amz-Date", "X-Amz-Security-Token", "Authorization"} {
				h[name] = strings.Join(r.Header.Values(name), ", ")
			}
			return h
		}
		got := request{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Header: header(r)}
		want := request{Method: http.MethodPost, Path: "/", Header: map[string]string{
			"Content-Type":         "application/x-amz-json-1.0",
			"X-Amz-Target":         "GraniteServiceVersion20100801.GetMetricData",
			"X-Amz-Date":           "20261123T120000Z",
			"X-Amz-Security-Token": creds.SessionToken,
			"Authorization":        expectedCloudWatchAuthorization(r, body, creds),
		}}
		if wantBody != "" {
			if err := json.Unmarshal(body, &got.Body); err != nil {
				t.Errorf("the body is not JSON: %s", body)
			}
			if err := json.Unmarshal([]byte(wantBody), &want.Body); err != nil {
				t.Fatalf("the test's body: %v", err)
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("the request differs from CloudWatch's wire format (-want +got):\n%s", diff)
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		answer.write(w)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// expectedCloudWatchAuthorization is the Authorization header that AWS
// computes for r, written out step by step for the five headers
// CloudWatch's request signs, independently of signSigV4.
func expectedCloudWatchAuthorization(r *http.Request, body []byte, creds awsCredentials) string {
	signed := "content-type;host;x-amz-date;x-amz-target"
	headers := "content-type:application/x-amz-json-1.0\n" +
		"host:" + r.Host + "\n" +
		"x-amz-date:20261123T120000Z\n"
	if creds.SessionToken != "" {
		signed = "content-type;host;x-amz-date;x-amz-security-token;x-amz-target"
		headers += "x-amz-security-token:" + creds.SessionToken + "\n"
	}
	headers += "x-amz-target:GraniteServiceVersion20100801.GetMetricData\n"
	sum := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
	canonical := "POST\n/\n\n" + headers + "\n" + signed + "\n" + sum(body)
	stringToSign := "AWS4-HMAC-SHA256\n20261123T120000Z\n20261123/us-east-1/monitoring/aws4_request\n" + sum([]byte(canonical))
	mac := func(key []byte, data string) []byte {
		h := hmac.New(sha256.New, key)
		h.Write([]byte(data))
		return h.Sum(nil)
	}
	key := mac(mac(mac(mac([]byte("AWS4"+creds.SecretAccessKey), "20261123"), "us-east-1"), "monitoring"), "aws4_request")
	return "AWS4-HMAC-SHA256 Credential=" + creds.AccessKeyID + "/20261123/us-east-1/monitoring/aws4_request, SignedHeaders=" +
		signed + ", Signature=" + hex.EncodeToString(mac(key, stringToSign))
}

// A query that is not a JSON array of MetricDataQueries, or that returns
// nothing, fails before any request, saying why; field names are read in
// any case, as Flagger reads them.
func TestCloudWatch_Query(t *testing.T) {
	tests := map[string]struct {
		query   string
		want    []cloudWatchQuery
		wantErr string
	}{
		"field names in any case": {
			query: `[{"id": "m1", "metricStat": {"metric": {"namespace": "AWS/ApplicationELB", "metricName": "HTTPCode_Target_5XX_Count"}, "period": 60, "stat": "Sum"}}]`,
			want: []cloudWatchQuery{{ID: "m1", MetricStat: &cloudWatchMetricStat{
				Metric: cloudWatchMetric{Namespace: "AWS/ApplicationELB", MetricName: "HTTPCode_Target_5XX_Count"}, Period: 60, Stat: "Sum"}}},
		},
		"not JSON":         {query: `SELECT SUM(x)`, wantErr: "is not a JSON array of MetricDataQueries"},
		"an object":        {query: `{"Id": "m1"}`, wantErr: "is not a JSON array of MetricDataQueries"},
		"a misspelt field": {query: `[{"Id": "m1", "Expresion": "m2"}]`, wantErr: `json: unknown field "Expresion"`},
		"two arrays":       {query: `[{"Id": "m1", "Expression": "1"}] []`, wantErr: "has more than one JSON array"},
		"empty":            {query: `[]`, wantErr: "has 0 MetricDataQueries: GetMetricData takes 1 to 500"},
		"no Id":            {query: `[{"Expression": "1"}]`, wantErr: "MetricDataQuery 0 has no Id"},
		"nothing returned": {query: `[{"Id": "m1", "Expression": "1", "ReturnData": false}]`,
			wantErr: "every MetricDataQuery has ReturnData false"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := parseCloudWatchQueries(tt.query)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("queries differ (-want +got):\n%s", diff)
			}
		})
	}
}

// A CloudWatch provider needs its region and an access key; without an
// address, it queries its region's endpoint.
func TestNewCloudWatchProvider(t *testing.T) {
	keys := map[string][]byte{"aws_access_key_id": []byte("AKIA"), "aws_secret_access_key": []byte("s")}
	tests := map[string]struct {
		spec        v1alpha1.MetricProvider
		secret      map[string][]byte
		wantErr     string
		wantAddress string
	}{
		"its region's endpoint": {spec: v1alpha1.MetricProvider{Type: v1alpha1.CloudWatchProvider, Region: "eu-west-1"},
			secret: keys, wantAddress: "https://monitoring.eu-west-1.amazonaws.com"},
		"no region": {spec: v1alpha1.MetricProvider{Type: v1alpha1.CloudWatchProvider}, secret: keys,
			wantErr: "the cloudwatch provider needs provider.region"},
		"no Secret": {spec: v1alpha1.MetricProvider{Type: v1alpha1.CloudWatchProvider, Region: "eu-west-1"},
			wantErr: "the cloudwatch provider needs a secretRef with aws_access_key_id and aws_secret_access_key"},
		"no secret access key": {spec: v1alpha1.MetricProvider{Type: v1alpha1.CloudWatchProvider, Region: "eu-west-1"},
			secret:  map[string][]byte{"aws_access_key_id": []byte("AKIA"), "aws_session_token": []byte("t")},
			wantErr: "secret apps/aws has no aws_secret_access_key (the cloudwatch provider needs aws_access_key_id and aws_secret_access_key)"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			p, err := New(Config{Spec: tt.spec, Secret: tt.secret, SecretName: "apps/aws"})
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := p.(*cloudWatch).address; got != tt.wantAddress {
				t.Errorf("address %q, want %q", got, tt.wantAddress)
			}
		})
	}
}
