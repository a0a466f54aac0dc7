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
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// The Canary's finalizer was renamed from finalizers.serin.dev to
// serin.dev/finalizer (the form the API server asks for). For one release
// the agent honours both: a live Canary gets the new name in place of the
// old, in one patch, so it is never without a finalizer; a deleted Canary
// loses both once its cleanup is done.

// ensureFinalizer gives a live Canary serin's finalizer, replacing the
// legacy name; it reports whether the finalizers changed.
func ensureFinalizer(obj client.Object) bool {
	removed := controllerutil.RemoveFinalizer(obj, v1alpha1.LegacyCanaryFinalizer)
	added := controllerutil.AddFinalizer(obj, v1alpha1.CanaryFinalizer)
	return removed || added
}

// removeFinalizers removes serin's finalizer, under either name.
func removeFinalizers(obj client.Object) {
	controllerutil.RemoveFinalizer(obj, v1alpha1.CanaryFinalizer)
	controllerutil.RemoveFinalizer(obj, v1alpha1.LegacyCanaryFinalizer)
}

// holdsFinalizer reports whether obj carries serin's finalizer, under
// either name.
func holdsFinalizer(obj client.Object) bool {
	return controllerutil.ContainsFinalizer(obj, v1alpha1.CanaryFinalizer) ||
		controllerutil.ContainsFinalizer(obj, v1alpha1.LegacyCanaryFinalizer)
}
