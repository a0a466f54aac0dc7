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

package controllers

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestAlertRules runs the unit tests of the example alert rules
// (config/prometheus/serin-alerts_test.yaml) with Prometheus's promtool:
// each alert fires on the series it is written for, with the labels and
// annotations the docs show, and stays quiet before.
func TestAlertRules(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		const missing = "needs promtool (Debian's package prometheus, which hack/testbed/packages.sh installs)"
		if os.Getenv("CI") == "true" {
			t.Fatal(missing)
		}
		t.Skip(missing)
	}
	dir := filepath.Join("..", "config", "prometheus")
	for _, args := range [][]string{
		{"check", "rules", "serin-alerts.yaml"},
		{"test", "rules", "serin-alerts_test.yaml"},
	} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %v: %v\n%s", args, err, out)
		}
	}
}
