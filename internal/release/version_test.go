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

package release

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseVersion(t *testing.T) {
	tests := map[string]struct {
		want    Version
		wantErr bool
	}{
		"v0.3.0":        {want: Version{Tag: "v0.3.0", Chart: "0.3.0"}},
		"v1.0.0":        {want: Version{Tag: "v1.0.0", Chart: "1.0.0"}},
		"v0.3.0-rc.1":   {want: Version{Tag: "v0.3.0-rc.1", Chart: "0.3.0-rc.1"}},
		"v10.20.30-a-b": {want: Version{Tag: "v10.20.30-a-b", Chart: "10.20.30-a-b"}},
		// Dev builds: what `git describe --tags --match 'v*' --always --dirty` prints.
		"dev":                          {want: Version{Tag: "dev", Dev: true, Chart: "0.0.0-dev+dev"}},
		"b917abf":                      {want: Version{Tag: "b917abf", Dev: true, Chart: "0.0.0-dev+b917abf"}},
		"b917abf-dirty":                {want: Version{Tag: "b917abf-dirty", Dev: true, Chart: "0.0.0-dev+b917abf-dirty"}},
		"v0.3.0-dirty":                 {want: Version{Tag: "v0.3.0-dirty", Dev: true, Chart: "0.0.0-dev+v0.3.0-dirty"}},
		"v0.3.0-4-gb917abf":            {want: Version{Tag: "v0.3.0-4-gb917abf", Dev: true, Chart: "0.0.0-dev+v0.3.0-4-gb917abf"}},
		"v0.3.0-rc.1-4-gb917abf-dirty": {want: Version{Tag: "v0.3.0-rc.1-4-gb917abf-dirty", Dev: true, Chart: "0.0.0-dev+v0.3.0-rc.1-4-gb917abf-dirty"}},
		// Not versions.
		"0.3.0":        {wantErr: true},
		"v0.3":         {wantErr: true},
		"v01.3.0":      {wantErr: true},
		"v0.3.0+build": {wantErr: true},
		"v0.3.0-01":    {wantErr: true},
		"latest":       {wantErr: true},
		"release-1":    {wantErr: true},
		"":             {wantErr: true},
	}
	for tag, tc := range tests {
		t.Run(tag, func(t *testing.T) {
			got, err := ParseVersion(tag)
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), "is not a semantic version") {
					t.Fatalf("ParseVersion(%q) = %+v, %v; want an error", tag, got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
