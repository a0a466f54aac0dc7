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
	"errors"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// cacheObjectsDesc is serin_cache_objects: what the agent's memory is set
// by, per kind, so that an operator sees that it caches its Canaries'
// objects and not the cluster's (and each shard its own).
var cacheObjectsDesc = prometheus.NewDesc("serin_cache_objects",
	"Objects held in the agent's informer cache, by kind; the kinds serin generates and its Canaries name hold only the objects with the agent's watch label.",
	[]string{"kind"}, nil)

// cacheObjects counts the objects of each informer the controller watches
// with, when Prometheus scrapes.
type cacheObjects struct {
	cache cache.Cache

	mu      sync.Mutex
	watched []watchedInformer
}

// watchedInformer is an informer of the controller's watches, by the kind
// it is reported as.
type watchedInformer struct {
	kind string
	obj  client.Object
}

// informersOf names the informers of objs by kind; ConfigMaps and Secrets,
// watched by metadata, as "ConfigMap (metadata)".
func informersOf(scheme *runtime.Scheme, objs []client.Object) []watchedInformer {
	out := make([]watchedInformer, 0, len(objs))
	for _, obj := range objs {
		gvk, err := apiutil.GVKForObject(obj, scheme)
		if err != nil {
			continue
		}
		kind := gvk.Kind
		if _, partial := obj.(*metav1.PartialObjectMetadata); partial {
			kind += " (metadata)"
		}
		out = append(out, watchedInformer{kind: kind, obj: obj})
	}
	return out
}

var (
	cacheObjectsOnce sync.Once
	sharedCacheSizes = &cacheObjects{}
)

// watchCacheSizes registers serin_cache_objects once per process, counting
// the informers of objs in c (the last manager's, in tests that start
// several).
func watchCacheSizes(c cache.Cache, scheme *runtime.Scheme, objs []client.Object) {
	sharedCacheSizes.mu.Lock()
	sharedCacheSizes.cache, sharedCacheSizes.watched = c, informersOf(scheme, objs)
	sharedCacheSizes.mu.Unlock()
	cacheObjectsOnce.Do(func() {
		var already prometheus.AlreadyRegisteredError
		if err := ctrlmetrics.Registry.Register(sharedCacheSizes); err != nil && !errors.As(err, &already) {
			panic(err)
		}
	})
}

func (c *cacheObjects) Describe(ch chan<- *prometheus.Desc) { ch <- cacheObjectsDesc }

func (c *cacheObjects) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	informers, watched := c.cache, c.watched
	c.mu.Unlock()
	if informers == nil {
		return
	}
	for _, w := range watched {
		// Never creates an informer: each was started by a watch.
		informer, err := informers.GetInformer(context.Background(), w.obj, cache.BlockUntilSynced(false))
		if err != nil {
			continue
		}
		if s, ok := informer.(interface{ GetStore() toolscache.Store }); ok {
			ch <- prometheus.MustNewConstMetric(cacheObjectsDesc, prometheus.GaugeValue, float64(len(s.GetStore().ListKeys())), w.kind)
		}
	}
}
