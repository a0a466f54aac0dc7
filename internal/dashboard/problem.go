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

package dashboard

import (
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// problem is an error of the API server worded for the page, and the
// HTTP status the dashboard's API answers it with.
type problem struct {
	Status  int    `json:"-"`
	Message string `json:"error"`
}

// problemOf words err for a person. The dashboard acts with the
// permissions of the kubeconfig's user and no others, so a refusal says so
// rather than looking like a failure of the dashboard; allNamespaces says
// whether the request was for every namespace, where a narrower -n may be
// allowed.
func problemOf(err error, allNamespaces bool) problem {
	var status apierrors.APIStatus
	message := err.Error()
	if errors.As(err, &status) && status.Status().Message != "" {
		message = status.Status().Message
	}
	switch {
	case apierrors.IsForbidden(err):
		hint := ""
		if allNamespaces {
			hint = " To see one namespace, start the dashboard with -n NAMESPACE."
		}
		return problem{Status: http.StatusForbidden, Message: "Forbidden: your Kubernetes user may not do this. " +
			"The dashboard acts with your kubeconfig's permissions only; ask for the role in the dashboard's documentation." +
			hint + " The API server said: " + message}
	case apierrors.IsUnauthorized(err):
		return problem{Status: http.StatusUnauthorized, Message: "Unauthorized: the API server refused your kubeconfig's " +
			"credentials (have they expired?). The API server said: " + message}
	case apierrors.IsNotFound(err):
		return problem{Status: http.StatusNotFound, Message: message}
	case apierrors.IsConflict(err), apierrors.IsInvalid(err):
		return problem{Status: http.StatusConflict, Message: message}
	}
	return problem{Status: http.StatusBadGateway, Message: "The Kubernetes API server failed: " + message}
}
