// Package v1alpha1 contains the serin.dev/v1alpha1 API: Canary, which drives
// the progressive delivery of a Deployment or Service, and MetricTemplate,
// which defines a metric check a Canary's analysis runs.
// +kubebuilder:object:generate=true
// +groupName=serin.dev
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group version used to register these objects.
	GroupVersion = schema.GroupVersion{Group: "serin.dev", Version: "v1alpha1"}

	// SchemeBuilder is used to add go types to the GroupVersionKind scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the types in this group-version to the given scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
