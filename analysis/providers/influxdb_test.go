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
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// TestInfluxDB checks the wire format of InfluxDB's v2 query API
// (POST /api/v2/query?org=…, Authorization: Token, a JSON body with the
// Flux and the annotated-CSV dialect), since no InfluxDB runs here, and
// reads annotated CSV answers of the shape its documentation gives.
func TestInfluxDB(t *testing.T) {
	query := `from(bucket: "istio")
  |> range(start: -1m)
  |> filter(fn: (r) => r["_measurement"] == "istio_requests_total" and r["destination_workload"] == "podinfo")
  |> group()
  |> sum()`
	want := wireRequest{
		Method: http.MethodPost,
		Path:   "/api/v2/query",
		Query:  url.Values{"org": {"my-org"}},
		Header: map[string]string{"Authorization": "Token influx-token", "Content-Type": "application/json", "Accept": "application/csv"},
		Body: `{"query":` + jsonString(query) + `,"type":"flux","dialect":{"header":true,"delimiter":",",` +
			`"commentPrefix":"#","annotations":["datatype","group","default"]}}`,
		JSONBody: true,
	}
	csv := func(lines ...string) wireAnswer {
		return wireAnswer{ContentType: "text/csv; charset=utf-8", Body: strings.Join(lines, "\r\n") + "\r\n\r\n"}
	}
	tests := map[string]providerCase{
		"a double": {
			answer: csv(
				"#datatype,string,long,dateTime:RFC3339,dateTime:RFC3339,double",
				"#group,false,false,true,true,false",
				"#default,_result,,,,",
				",result,table,_start,_stop,_value",
				",,0,2026-11-23T11:59:00Z,2026-11-23T12:00:00Z,99.25"),
			want: 99.25,
		},
		"a long, from count()": {
			answer: csv(
				"#datatype,string,long,string,long",
				"#group,false,false,true,false",
				"#default,count,,,",
				",result,table,_measurement,_value",
				",,0,istio_requests_total,42"),
			want: 42,
		},
		"no record: no data": {answer: wireAnswer{ContentType: "text/csv", Body: "\r\n"}, wantErr: "no values found for query", wantNoData: true},
		"an empty _value: no data": {
			answer: csv(
				"#datatype,string,long,double",
				"#group,false,false,false",
				"#default,_result,,",
				",result,table,_value",
				",,0,"),
			wantErr:    "no values found for query",
			wantNoData: true,
		},
		"a table per host": {
			answer: csv(
				"#datatype,string,long,string,double",
				"#group,false,false,true,false",
				"#default,_result,,,",
				",result,table,host,_value",
				",,0,a,1.5",
				",,1,b,2.5"),
			wantErr: "returned 2 series ({host=a}, {host=b}); a metric check needs one number: aggregate the tables to a single record",
		},
		"a string": {
			answer: csv(
				"#datatype,string,long,string",
				"#group,false,false,false",
				"#default,_result,,",
				",result,table,_value",
				",,0,up"),
			wantErr: `returned a string _value "up"; a metric check needs a number`,
		},
		"an error in the answer": {
			answer: csv(
				"#datatype,string,string",
				"#group,true,true",
				"#default,,",
				",error,reference",
				`,"failed to execute query: bucket ""istio"" not found",`),
			wantErr: `failed: failed to execute query: bucket "istio" not found`,
		},
		"unauthorized": {
			answer:  wireAnswer{Status: http.StatusUnauthorized, ContentType: "application/json", Body: `{"code":"unauthorized","message":"unauthorized access"}`},
			wantErr: "answered 401: unauthorized access",
		},
	}
	runProviderCases(t, v1alpha1.MetricProvider{Type: v1alpha1.InfluxDBProvider},
		map[string]string{"token": "influx-token", "org": "my-org"}, query, want, tests)
}

// Without a Secret, as an InfluxDB 1.8 with Flux and no auth: no org, no
// Authorization.
func TestInfluxDB_NoSecret(t *testing.T) {
	want := wireRequest{Method: http.MethodPost, Path: "/api/v2/query", Header: map[string]string{"Authorization": ""},
		Body: `{"query":"x","type":"flux","dialect":{"header":true,"delimiter":",","commentPrefix":"#","annotations":["datatype","group","default"]}}`, JSONBody: true}
	runProviderCase(t, v1alpha1.MetricProvider{Type: v1alpha1.InfluxDBProvider}, nil, "x", want, providerCase{
		answer: wireAnswer{Body: "#datatype,string,long,double\r\n#group,false,false,false\r\n#default,_result,,\r\n,result,table,_value\r\n,,0,1\r\n"},
		want:   1,
	})
}
