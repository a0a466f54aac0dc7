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
	"bytes"
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/serin-dev/serin/internal/outbound"
)

// influxDB sends Flux to InfluxDB's v2 query API (POST /api/v2/query),
// with Flagger's Secret keys: token (Authorization: Token) and org.
type influxDB struct {
	httpProvider
	token, org string
}

func newInfluxDBProvider(cfg Config) (Provider, error) {
	keys, err := optionalSecretKeys(cfg, "token", "org")
	if err != nil {
		return nil, err
	}
	return &influxDB{httpProvider: newHTTPProvider(cfg), token: keys[0], org: keys[1]}, nil
}

// influxDBQuery is the body of a query: Flux, answered as annotated CSV
// with the datatype annotation, so that the value's type is known.
type influxDBQuery struct {
	Query   string          `json:"query"`
	Type    string          `json:"type"`
	Dialect influxDBDialect `json:"dialect"`
}

type influxDBDialect struct {
	Header        bool     `json:"header"`
	Delimiter     string   `json:"delimiter"`
	CommentPrefix string   `json:"commentPrefix"`
	Annotations   []string `json:"annotations"`
}

// Query runs the Flux query and returns the _value of its one record. No
// record, or an empty _value, is no data; several records fail the check.
func (p *influxDB) Query(ctx context.Context, query string) (float64, error) {
	params := url.Values{}
	if p.org != "" {
		params.Set("org", p.org)
	}
	header := http.Header{"Accept": {"application/csv"}, "Content-Type": {"application/json"}}
	if p.token != "" {
		header.Set("Authorization", "Token "+p.token)
	}
	body, err := json.Marshal(influxDBQuery{Query: query, Type: "flux", Dialect: influxDBDialect{
		Header: true, Delimiter: ",", CommentPrefix: "#", Annotations: []string{"datatype", "group", "default"},
	}})
	if err != nil {
		return 0, err
	}
	call, answer, err := p.fetch(ctx, http.MethodPost, params, header, body, "api", "v2", "query")
	if err != nil {
		return 0, err
	}
	if !answer.OK() {
		var r struct {
			Message string `json:"message"`
		}
		_ = call.decodeJSON(answer, &r)
		return 0, call.refused(answer, r.Message)
	}
	records, err := readFluxCSV(answer.Body)
	if err != nil {
		return 0, fmt.Errorf("influxdb query %q failed: %w", query, err)
	}
	switch len(records) {
	case 0:
		return 0, &ErrNoData{Query: query}
	case 1:
	default:
		var names []string
		for _, r := range records {
			names = append(names, r.series)
		}
		return 0, severalSeries(query, names, "aggregate the tables to a single record, e.g. |> group() |> sum()")
	}
	return records[0].number(query)
}

// fluxRecord is the _value of one row of a Flux answer, with its type and
// the group key that names its table.
type fluxRecord struct {
	value, datatype, series string
}

// number reads the value: double, long or unsignedLong. An empty value
// (null) and NaN are no data; ±Inf fails.
func (r fluxRecord) number(query string) (float64, error) {
	if r.value == "" {
		return 0, &ErrNoData{Query: query}
	}
	var v float64
	var err error
	switch r.datatype {
	case "double":
		v, err = strconv.ParseFloat(r.value, 64)
	case "long":
		var i int64
		i, err = strconv.ParseInt(r.value, 10, 64)
		v = float64(i)
	case "unsignedLong":
		var u uint64
		u, err = strconv.ParseUint(r.value, 10, 64)
		v = float64(u)
	default:
		return 0, fmt.Errorf("query %q returned a %s _value %q; a metric check needs a number", query,
			outbound.Excerpt([]byte(r.datatype)), outbound.Excerpt([]byte(r.value)))
	}
	switch {
	case err != nil:
		return 0, fmt.Errorf("query %q returned %q, not a number", query, outbound.Excerpt([]byte(r.value)))
	case math.IsNaN(v):
		return 0, &ErrNoData{Query: query, NaN: true}
	case math.IsInf(v, 0):
		return 0, fmt.Errorf("query %q returned %s, not a finite number: it passes no thresholdRange", query, r.value)
	}
	return v, nil
}

// readFluxCSV reads the records of an annotated CSV answer: tables, each
// with #datatype, #group and #default annotations and a header, separated
// by blank lines. An error table (columns error and reference) is the
// query's error.
func readFluxCSV(body []byte) ([]fluxRecord, error) {
	reader := csv.NewReader(bytes.NewReader(body))
	reader.FieldsPerRecord = -1
	reader.ReuseRecord = false
	var records []fluxRecord
	var datatypes, groups, defaults, columns []string
	for {
		row, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return records, nil
		}
		if err != nil {
			return nil, fmt.Errorf("the answer is not annotated CSV: %w", err)
		}
		switch {
		case row[0] == "#datatype":
			datatypes, columns = row, nil
		case row[0] == "#group":
			groups = row
		case row[0] == "#default":
			defaults = row
		case strings.HasPrefix(row[0], "#"):
		case columns == nil:
			columns = row
		case slices.Contains(columns, "error"):
			return nil, errors.New(outbound.Excerpt([]byte(row[slices.Index(columns, "error")])))
		default:
			record, err := fluxValue(row, columns, fluxAnnotations{datatypes, groups, defaults})
			if err != nil {
				return nil, err
			}
			records = append(records, record)
		}
	}
}

// fluxAnnotations are the annotations of a table, a value per column.
type fluxAnnotations struct {
	datatypes, groups, defaults []string
}

// at returns the annotation of column i, "" when there is none.
func at(annotation []string, i int) string {
	if i < len(annotation) {
		return annotation[i]
	}
	return ""
}

// fluxValue is the _value of row (the column's default when empty), its
// datatype, and its table's group key ({_measurement=cpu,host=a}).
func fluxValue(row, columns []string, annotations fluxAnnotations) (fluxRecord, error) {
	i := slices.Index(columns, "_value")
	if i < 0 || i >= len(row) {
		return fluxRecord{}, errors.New("a table has no _value column: a metric check needs one, e.g. from a sum()")
	}
	record := fluxRecord{value: cmp.Or(row[i], at(annotations.defaults, i)), datatype: at(annotations.datatypes, i)}
	var key []string
	for j, column := range columns {
		if j > 0 && j < len(row) && at(annotations.groups, j) == "true" && column != "_start" && column != "_stop" {
			key = append(key, column+"="+row[j])
		}
	}
	record.series = "{" + strings.Join(key, ",") + "}"
	return record, nil
}
