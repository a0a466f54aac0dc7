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
	"github.com/serin-dev/serin/gitops/chartrender"
)

// WithChartRenderer renders the charts of HelmReleases (and reads Helm
// repository indexes) with r: in its child processes, within its bounds
// (chartrender.Limits; by default chartrender's defaults).
func WithChartRenderer(r *chartrender.Renderer) ReverterOption {
	return func(g *GitReverter) error {
		g.chartOptions.Renderer = r
		return nil
	}
}

// WithChartFetchAllowLoopback lets a HelmRepository's URL, or a chart URL
// of its index, be a loopback address: refused by default, as link-local
// and metadata addresses always are.
func WithChartFetchAllowLoopback(allow bool) ReverterOption {
	return func(g *GitReverter) error {
		g.chartOptions.AllowLoopback = allow
		return nil
	}
}
