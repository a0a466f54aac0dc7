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
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/rollout"
)

// A sharded agent (--watch-label-selector, Flux's sharding) caches the
// Canaries of its shard only. A shard boundary must neither hide a member
// of a group nor let two Canaries claim one target: a member or a claim
// that the cache does not hold is read live, and a group whose members or
// whose CanaryGroup are in different shards is invalid (its members start
// no rollout, the group is Stalled), naming the label to fix. The
// CanaryGroups are cached whatever their labels (they are few), so that a
// member sees a group of another shard.

// sharded reports whether the agent reconciles one shard: a selector that
// does not select everything.
func sharded(shard labels.Selector) bool {
	return shard != nil && !shard.Empty()
}

// inShard reports whether obj is in the agent's shard.
func inShard(shard labels.Selector, obj metav1.Object) bool {
	return !sharded(shard) || shard.Matches(labels.Set(obj.GetLabels()))
}

// shardMismatch says how obj's labels miss the agent's selector: the
// values it has of the selector's keys, and the selector.
func shardMismatch(shard labels.Selector, obj metav1.Object) string {
	reqs, _ := shard.Requirements()
	var have []string
	for _, r := range reqs {
		if v, ok := obj.GetLabels()[r.Key()]; ok {
			have = append(have, r.Key()+"="+v)
		} else {
			have = append(have, "no "+r.Key()+" label")
		}
	}
	return fmt.Sprintf("%s, where this agent's --watch-label-selector is %s", strings.Join(have, ", "), shard)
}

// memberInOtherShard reads, live, a member the cache does not hold: when
// it exists, the agent is sharded and it is outside the shard, it says
// how; "" when it does not exist (or the agent is not sharded).
func memberInOtherShard(ctx context.Context, live client.Reader, shard labels.Selector, namespace, name string) (string, error) {
	if !sharded(shard) || live == nil {
		return "", nil
	}
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind(v1alpha1.CanaryKind))
	err := live.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, m)
	switch {
	case apierrors.IsNotFound(err):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("reading Canary %s/%s outside the cache: %w", namespace, name, err)
	}
	return shardMismatch(shard, m), nil
}

// otherShardMember is the problem of a group one of whose members is in
// another shard, as its member Canaries say it.
func otherShardMember(group, namespace, member, how string) string {
	return "CanaryGroup " + group + ": " + rollout.OtherShardMember(namespace, member, how)
}

// otherShardGroup is the problem of a member whose CanaryGroup is in
// another shard.
func otherShardGroup(g *v1alpha1.CanaryGroup, shard labels.Selector) string {
	return fmt.Sprintf("CanaryGroup %s is in another shard than its members (it has %s): give it its members' shard label",
		g.Name, shardMismatch(shard, g))
}
