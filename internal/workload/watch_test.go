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

package workload

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/serin-dev/serin/internal/testing/testobj"
)

func TestWatchLabel(t *testing.T) {
	for selector, want := range map[string]string{
		"":                                  "watch.serin.dev/default",
		"sharding.fluxcd.io/key=shard1":     "watch.serin.dev/shard1",
		"sharding.fluxcd.io/key==shard-b":   "watch.serin.dev/shard-b",
		"!sharding.fluxcd.io/key":           "watch.serin.dev/shard-",
		"sharding.fluxcd.io/key in (a, b)":  "watch.serin.dev/shard-",
		"team=web,sharding.fluxcd.io/key=x": "watch.serin.dev/shard-",
	} {
		got := WatchLabel(selector)
		if !strings.HasPrefix(got, want) {
			t.Errorf("WatchLabel(%q) = %q, want %q…", selector, got, want)
		}
		if errs := validation.IsQualifiedName(got); len(errs) > 0 {
			t.Errorf("WatchLabel(%q) = %q is not a label key: %v", selector, got, errs)
		}
	}
	if a, b := WatchLabel("!sharding.fluxcd.io/key"), WatchLabel("sharding.fluxcd.io/key in (a, b)"); a == b {
		t.Errorf("two selectors share the key %s", a)
	}
}

// A generated object carries its own agent's watch label, never the ones
// of its source: a target labelled by another shard does not put its
// primary in that shard's cache.
func TestGeneratedObjectsDropTheSourcesWatchLabels(t *testing.T) {
	canary := testobj.MakeCanary("podinfo", "apps").Obj()
	target := testobj.MakeDeployment("podinfo", "apps").Label("watch.serin.dev/shard1", "true").Label("team", "web").Obj()
	l, _ := generatedMeta(canary, target.Labels, nil)
	if _, ok := l["watch.serin.dev/shard1"]; ok || l["team"] != "web" {
		t.Errorf("generated labels %v: want team=web and no watch label", l)
	}
}
