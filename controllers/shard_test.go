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
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// A member the cache misses is read live only by a sharded agent, and is
// in another shard only when it exists; the message names the labels it
// has of the selector's keys and the selector.
func TestMemberInOtherShard(t *testing.T) {
	shard, err := labels.Parse("sharding.fluxcd.io/key=a")
	if err != nil {
		t.Fatal(err)
	}
	web := testobj.MakeCanary("web", "shop").Obj()
	web.Labels = map[string]string{"sharding.fluxcd.io/key": "b"}
	bare := testobj.MakeCanary("db", "shop").Obj()
	s := runtime.NewScheme()
	_ = v1alpha1.AddToScheme(s)
	live := fake.NewClientBuilder().WithScheme(s).WithObjects(web, bare).Build()
	tests := []struct {
		name   string
		shard  labels.Selector
		member string
		want   string
	}{
		{"in another shard", shard, "web", "sharding.fluxcd.io/key=b, where this agent's --watch-label-selector is sharding.fluxcd.io/key=a"},
		{"with no shard label", shard, "db", "no sharding.fluxcd.io/key label, where this agent's --watch-label-selector is sharding.fluxcd.io/key=a"},
		{"that does not exist", shard, "wbe", ""},
		{"read by an agent that is not sharded", nil, "web", ""},
		{"read by an agent of every Canary", labels.Everything(), "web", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := memberInOtherShard(context.Background(), live, tc.shard, "shop", tc.member)
			if err != nil || got != tc.want {
				t.Errorf("memberInOtherShard = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	if !inShard(shard, &metav1.ObjectMeta{Labels: map[string]string{"sharding.fluxcd.io/key": "a"}}) || inShard(shard, web) || !inShard(nil, web) {
		t.Error("inShard")
	}
}
