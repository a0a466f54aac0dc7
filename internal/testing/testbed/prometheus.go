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

package testbed

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// PrometheusBinary is Debian's prometheus package (apt-get install prometheus).
const PrometheusBinary = "/usr/bin/prometheus"

// Prometheus is a real Prometheus server on loopback, scraping targets the
// test serves (kwok pods run no containers, so tests export the app's
// request metrics themselves).
type Prometheus struct {
	// URL is the server's base URL, for MetricTemplates.
	URL string
}

// StartPrometheus starts Prometheus scraping targets (host:port) every
// scrapeInterval, and waits until it is ready.
func (tb *Testbed) StartPrometheus(ctx context.Context, scrapeInterval time.Duration, targets ...string) (*Prometheus, error) {
	bin := PrometheusBinary
	if _, err := os.Stat(bin); err != nil {
		if bin, err = exec.LookPath("prometheus"); err != nil {
			return nil, errors.New("prometheus not installed: apt-get install prometheus (Debian), see CONTRIBUTING.md")
		}
	}
	dir := filepath.Join(tb.Dir, "prometheus")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	quoted := make([]string, len(targets))
	for i, t := range targets {
		quoted[i] = strconv.Quote(t)
	}
	config := fmt.Sprintf(`global:
  scrape_interval: %s
  evaluation_interval: %s
scrape_configs:
- job_name: app
  static_configs:
  - targets: [%s]
`, scrapeInterval, scrapeInterval, strings.Join(quoted, ", "))
	configFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(configFile, []byte(config), 0o644); err != nil {
		return nil, err
	}
	ports, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(ports[0])
	if err := tb.startProcess(bin, nil,
		"--config.file="+configFile, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn",
	); err != nil {
		return nil, err
	}
	p := &Prometheus{URL: "http://" + addr}
	if err := tb.waitReady(ctx, p.URL+"/-/ready"); err != nil {
		return nil, err
	}
	return p, nil
}
