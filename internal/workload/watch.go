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
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/validation"
)

// WatchLabelPrefix starts the label that puts an object in an agent's
// caches: watch.serin.dev/<shard>: "true". The agent caches the
// Deployments, DaemonSets, Services, EndpointSlices, autoscalers, routes
// and the metadata of ConfigMaps and Secrets that carry its shard's label,
// and nothing else of those kinds: its memory is set by its Canaries, not
// by the cluster. It puts the label on what it generates and, the first
// time a Canary names them, on the Canary's target, autoscaler and the
// configs the target uses. One key per shard, so that a ConfigMap two
// shards' targets share is in both shards' caches.
const WatchLabelPrefix = "watch.serin.dev/"

// WatchLabelValue is the value of the watch label.
const WatchLabelValue = "true"

// WatchLabel returns the watch label key of the agent that reconciles the
// Canaries matching watchSelector (its --watch-label-selector):
// watch.serin.dev/default without a selector, the value of an equality
// selector (sharding.fluxcd.io/key=shard1: watch.serin.dev/shard1), and a
// hash of any other selector (!sharding.fluxcd.io/key). Two agents whose
// keys collide only cache each other's objects too.
func WatchLabel(watchSelector string) string {
	if strings.TrimSpace(watchSelector) == "" {
		return WatchLabelPrefix + "default"
	}
	if sel, err := labels.Parse(watchSelector); err == nil {
		if reqs, _ := sel.Requirements(); len(reqs) == 1 {
			r := reqs[0]
			if op := r.Operator(); (op == selection.Equals || op == selection.DoubleEquals) && r.Values().Len() == 1 {
				if key := WatchLabelPrefix + r.Values().List()[0]; len(validation.IsQualifiedName(key)) == 0 {
					return key
				}
			}
		}
	}
	sum := sha256.Sum256([]byte(watchSelector))
	return WatchLabelPrefix + "shard-" + hex.EncodeToString(sum[:4])
}

// WatchSelector selects the objects carrying the watch label key.
func WatchSelector(key string) labels.Selector {
	return labels.SelectorFromSet(labels.Set{key: WatchLabelValue})
}

// isWatchKey reports whether a label key is an agent's watch label; a
// generated object does not copy it from its source.
func isWatchKey(key string) bool {
	return strings.HasPrefix(key, WatchLabelPrefix)
}
