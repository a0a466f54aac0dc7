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

package gitops

import (
	"os"
	"testing"

	"github.com/serin-dev/serin/gitops/chartrender"
)

// TestMain makes the test binary the chart renderer when a test's render
// starts it as its child (chartrender.ChildArg), as the agent's main does.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == chartrender.ChildArg {
		os.Exit(chartrender.Main())
	}
	os.Exit(m.Run())
}
