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
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/workload"
)

// configHashes memoizes the data hash of each ConfigMap and Secret by
// resourceVersion. serin watches configs by metadata only (no cluster-wide
// cache of Secrets' data); their data is read live, once per change.
type configHashes struct {
	mu     sync.Mutex
	byName map[string]configHash
}

type configHash struct {
	resourceVersion string
	hash            string
}

// trackedConfigs returns the data hash of each config the template uses.
// A config that does not exist is left out: the pods will not start, which
// the Deployment's readiness reports.
func (r *CanaryReconciler) trackedConfigs(ctx context.Context, namespace string, refs []workload.ConfigRef) (map[string]string, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(refs))
	for _, ref := range refs {
		meta := &metav1.PartialObjectMetadata{}
		meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(ref.Kind))
		key := types.NamespacedName{Namespace: namespace, Name: ref.Name}
		if err := r.Get(ctx, key, meta); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, fmt.Errorf("failed to get %s: %w", ref, err)
		}
		hash, err := r.configHash(ctx, key, ref.Kind, meta.ResourceVersion)
		if err != nil {
			return nil, err
		}
		out[ref.String()] = hash
	}
	return out, nil
}

// configHash returns the hash of a config's data at a resourceVersion,
// reading the data live only when the version is new.
func (r *CanaryReconciler) configHash(ctx context.Context, key types.NamespacedName, kind, resourceVersion string) (string, error) {
	memoKey := kind + "/" + key.String()
	r.configs.mu.Lock()
	if h, ok := r.configs.byName[memoKey]; ok && h.resourceVersion == resourceVersion {
		r.configs.mu.Unlock()
		return h.hash, nil
	}
	r.configs.mu.Unlock()

	data, rv, err := r.readConfig(ctx, key, kind)
	if err != nil {
		return "", err
	}
	hash := workload.ConfigDataHash(data)
	r.configs.mu.Lock()
	r.configs.byName[memoKey] = configHash{resourceVersion: rv, hash: hash}
	r.configs.mu.Unlock()
	return hash, nil
}

// readConfig reads a ConfigMap's or Secret's data live.
func (r *CanaryReconciler) readConfig(ctx context.Context, key types.NamespacedName, kind string) (map[string][]byte, string, error) {
	if kind == "Secret" {
		s := &corev1.Secret{}
		if err := r.APIReader.Get(ctx, key, s); err != nil {
			return nil, "", fmt.Errorf("failed to read secret %s: %w", key, err)
		}
		return s.Data, s.ResourceVersion, nil
	}
	cm := &corev1.ConfigMap{}
	if err := r.APIReader.Get(ctx, key, cm); err != nil {
		return nil, "", fmt.Errorf("failed to read configmap %s: %w", key, err)
	}
	data := make(map[string][]byte, len(cm.Data)+len(cm.BinaryData))
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		data["binary:"+k] = v
	}
	return data, cm.ResourceVersion, nil
}

// primaryConfigsExist reports whether the primary's copy of every tracked
// config exists (read from the metadata cache).
func (r *CanaryReconciler) primaryConfigsExist(ctx context.Context, namespace string, tracked map[string]string) (bool, error) {
	for key := range tracked {
		ref, ok := workload.ParseConfigRef(key)
		if !ok {
			continue
		}
		meta := &metav1.PartialObjectMetadata{}
		meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(ref.Kind))
		err := r.Get(ctx, types.NamespacedName{Namespace: namespace, Name: workload.PrimaryConfigName(ref.Name)}, meta)
		if apierrors.IsNotFound(err) {
			return false, nil
		} else if err != nil {
			return false, fmt.Errorf("failed to get the primary's copy of %s: %w", ref, err)
		}
	}
	return true, nil
}

// copyPrimaryConfigs writes the primary's copies of the tracked configs
// with their current data (at promotion, the canary's data).
func (r *CanaryReconciler) copyPrimaryConfigs(ctx context.Context, obj *v1alpha1.Canary, tracked map[string]string) error {
	for key := range tracked {
		ref, ok := workload.ParseConfigRef(key)
		if !ok {
			continue
		}
		if err := r.copyPrimaryConfig(ctx, obj, ref); err != nil {
			return err
		}
	}
	return nil
}

// copyPrimaryConfig creates or updates the primary's copy of one config
// with the source's data, read live. What exists under the copy's name is
// read from the metadata cache that the config watch keeps anyway: a full
// get through the cache would start a cluster-wide informer holding every
// Secret's data. A copy the Canary may not take over is left as it is.
func (r *CanaryReconciler) copyPrimaryConfig(ctx context.Context, obj *v1alpha1.Canary, ref workload.ConfigRef) error {
	current := &metav1.PartialObjectMetadata{}
	current.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(ref.Kind))
	found, err := r.getOptional(ctx, obj.Namespace, workload.PrimaryConfigName(ref.Name), current)
	if err != nil {
		return err
	}
	dst := metav1.ObjectMeta{Namespace: obj.Namespace, Name: workload.PrimaryConfigName(ref.Name)}
	if found {
		dst = current.ObjectMeta
	}
	dst.Labels = map[string]string{workload.CanaryNameLabel: obj.Name}
	src := types.NamespacedName{Namespace: obj.Namespace, Name: ref.Name}
	var out client.Object
	if ref.Kind == "Secret" {
		in := &corev1.Secret{}
		if err := r.APIReader.Get(ctx, src, in); err != nil {
			return fmt.Errorf("failed to read secret %s: %w", src, err)
		}
		out = &corev1.Secret{ObjectMeta: dst, Type: in.Type, Data: in.Data}
	} else {
		in := &corev1.ConfigMap{}
		if err := r.APIReader.Get(ctx, src, in); err != nil {
			return fmt.Errorf("failed to read configmap %s: %w", src, err)
		}
		out = &corev1.ConfigMap{ObjectMeta: dst, Data: in.Data, BinaryData: in.BinaryData}
	}
	if err := workload.Claim(obj, out, r.Client.Scheme()); err != nil {
		return err
	}
	// The resourceVersion read with the metadata turns a stale cache into
	// a conflict, retried, rather than a lost write.
	if found {
		err = r.Update(ctx, out, client.FieldOwner(r.ControllerName))
	} else {
		err = r.Create(ctx, out, client.FieldOwner(r.ControllerName))
	}
	if err != nil {
		return fmt.Errorf("failed to copy %s for the primary: %w", ref, err)
	}
	return nil
}
