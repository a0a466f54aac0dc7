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
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
)

// kubectlPluginName is the executable kubectl runs for `kubectl serin`:
// kubectl looks up kubectl-NAME on the PATH.
const kubectlPluginName = "kubectl-serin"

// DisplayName is what serin's help calls the command when the binary was
// started as argv0: "kubectl serin" when kubectl ran it as its plugin
// (an executable named kubectl-serin, a copy or a link of serin), "serin"
// otherwise. The commands themselves behave the same either way.
func DisplayName(argv0 string) string {
	name := strings.TrimSuffix(filepath.Base(argv0), ".exe")
	if name == kubectlPluginName {
		return "kubectl serin"
	}
	return "serin"
}

// exampleCommand matches "serin " where an example starts a command: at
// the start of a line or after a pipe.
var exampleCommand = regexp.MustCompile(`(?m)(^\s*|\|\s*)serin `)

// SetDisplayName makes the usage lines, help and examples of root and its
// subcommands say name ("kubectl serin") instead of serin, as kubectl's
// plugin conventions ask of a plugin (cobra's CommandDisplayNameAnnotation).
func SetDisplayName(root *cobra.Command, name string) {
	if name == root.Name() {
		return
	}
	if root.Annotations == nil {
		root.Annotations = map[string]string{}
	}
	root.Annotations[cobra.CommandDisplayNameAnnotation] = name
	var rename func(*cobra.Command)
	rename = func(cmd *cobra.Command) {
		cmd.Example = exampleCommand.ReplaceAllString(cmd.Example, "${1}"+name+" ")
		for _, sub := range cmd.Commands() {
			rename(sub)
		}
	}
	rename(root)
}
