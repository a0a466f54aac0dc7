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

package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"
)

// outputFormat is the --output of the get commands: the table (empty),
// the table with every column (wide), or the objects for scripts.
type outputFormat string

const (
	outputTable outputFormat = ""
	outputWide  outputFormat = "wide"
	outputJSON  outputFormat = "json"
	outputYAML  outputFormat = "yaml"
)

// structured tells whether the format is for scripts (json, yaml).
func (f outputFormat) structured() bool { return f == outputJSON || f == outputYAML }

// addOutputFlag binds -o, --output to format, offering the formats allowed
// (besides the default) in its help and its completion.
func addOutputFlag(cmd *cobra.Command, format *string, allowed ...outputFormat) {
	names := make([]string, len(allowed))
	for i, f := range allowed {
		names[i] = string(f)
	}
	cmd.Flags().StringVarP(format, "output", "o", "",
		"output format: "+strings.Join(names, ", ")+" (default: a table)")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(names, cobra.ShellCompDirectiveNoFileComp))
}

// parseOutputFormat checks the value of --output against the formats a
// command allows.
func parseOutputFormat(value string, allowed ...outputFormat) (outputFormat, error) {
	f := outputFormat(value)
	if f == outputTable || slices.Contains(allowed, f) {
		return f, nil
	}
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = string(a)
	}
	return f, fmt.Errorf("unknown output format %q: use %s, or leave --output out", value, strings.Join(names, ", "))
}

// writeStructured prints v as indented JSON or as YAML.
func writeStructured(w io.Writer, f outputFormat, v any) error {
	if f == outputYAML {
		data, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
