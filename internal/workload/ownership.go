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
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// NotManagedError is an object with a name serin generates for a Canary
// that the Canary may not take over: one it did not create, or one another
// controller controls.
type NotManagedError struct {
	Kind, Name string
	// Controller is the object's controller; nil when it has none.
	Controller *metav1.OwnerReference
}

func (e *NotManagedError) Error() string {
	if c := e.Controller; c != nil {
		return fmt.Sprintf("%s %s is controlled by %s %s (%s), not by this Canary: remove it (or that %s) so that serin can generate it",
			e.Kind, e.Name, c.Kind, c.Name, c.APIVersion, c.Kind)
	}
	return fmt.Sprintf("%s %s exists and is not managed by this Canary: delete it, or annotate it %s=true to let serin take it over",
		e.Kind, e.Name, v1alpha1.AdoptAnnotation)
}

// MayManage returns nil when canary may write o, one of the objects it
// generates, as read from the cluster (a new object has no
// resourceVersion): o is new, the Canary controls it already, or o has no
// controller and carries serin.dev/adopt: "true". Otherwise it returns a
// *NotManagedError, and o must be left as it is.
func MayManage(canary *v1alpha1.Canary, o client.Object, scheme *runtime.Scheme) error {
	if o.GetResourceVersion() == "" {
		return nil
	}
	owner := metav1.GetControllerOf(o)
	switch {
	case owner != nil && owner.UID == canary.UID:
		return nil
	case owner == nil && o.GetAnnotations()[v1alpha1.AdoptAnnotation] == "true":
		return nil
	}
	kind := "object"
	if gvk, err := apiutil.GVKForObject(o, scheme); err == nil {
		kind = gvk.Kind
	}
	return &NotManagedError{Kind: kind, Name: o.GetName(), Controller: owner}
}

// Claim makes canary the controller of o when MayManage allows it. Call it
// before changing o, so that a refused object is not written.
func Claim(canary *v1alpha1.Canary, o client.Object, scheme *runtime.Scheme) error {
	if err := MayManage(canary, o, scheme); err != nil {
		return err
	}
	return controllerutil.SetControllerReference(canary, o, scheme)
}

// Release undoes Claim when canary goes away: it removes canary from o's
// owner references, so that garbage collection keeps o, and marks o as
// serin's to take back (serin.dev/adopt), so that a Canary created again
// under the same name picks up what serin generated without a person
// annotating each object.
func Release(canary *v1alpha1.Canary, o metav1.Object) {
	ann := o.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[v1alpha1.AdoptAnnotation] = "true"
	o.SetAnnotations(ann)
	refs := o.GetOwnerReferences()
	kept := refs[:0]
	for _, ref := range refs {
		if ref.UID != canary.UID {
			kept = append(kept, ref)
		}
	}
	o.SetOwnerReferences(kept)
}
