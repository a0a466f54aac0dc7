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

package v1alpha1

// The types below mirror the parts of Gateway API's HTTPRoute (v1) that
// serin sets on the rule of the HTTPRoute it generates, field for field and
// with the same JSON names, so that a snippet of an HTTPRoute fits here. They
// are mirrors and not sigs.k8s.io/gateway-api's own types so that the api
// module does not depend on Gateway API.

// HTTPRouteMatch selects the requests the HTTPRoute's rule sends to the
// primary and canary: all of its conditions must hold.
type HTTPRouteMatch struct {
	// Path matches the request path.
	// +optional
	Path *HTTPPathMatch `json:"path,omitempty"`

	// Headers match request headers; all must match. One entry per name.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Headers []HTTPHeaderMatch `json:"headers,omitempty"`

	// QueryParams match query parameters; all must match. One entry per
	// name.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	// +optional
	QueryParams []HTTPQueryParamMatch `json:"queryParams,omitempty"`

	// Method matches the request method.
	// +kubebuilder:validation:Enum=GET;HEAD;POST;PUT;DELETE;CONNECT;OPTIONS;TRACE;PATCH
	// +optional
	Method string `json:"method,omitempty"`
}

// AnalysisMatch selects the users of an A/B test (analysis.match): the
// requests that carry all of its headers and query parameters go to the
// canary during the analysis, every other request to the primary. A
// cookie is a RegularExpression on the Cookie header, e.g.
// ^(.*?;\s*)?(canary=always)(;.*)?$.
// +kubebuilder:validation:XValidation:rule="(has(self.headers) && size(self.headers) > 0) || (has(self.queryParams) && size(self.queryParams) > 0)",message="analysis.match entries need at least one header or query parameter: an entry that matches every request is no A/B test (use analysis.stepWeight for a share of all users)"
type AnalysisMatch struct {
	// Headers match request headers; all must match. One entry per name.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Headers []HTTPHeaderMatch `json:"headers,omitempty"`

	// QueryParams match query parameters; all must match. One entry per
	// name.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	// +optional
	QueryParams []HTTPQueryParamMatch `json:"queryParams,omitempty"`
}

// HTTPPathMatch matches the request path.
// +kubebuilder:validation:XValidation:rule="(has(self.type) && self.type == 'RegularExpression') || !has(self.value) || (self.value.startsWith('/') && !self.value.contains('//'))",message="match.path.value must be an absolute path, starting with '/' and without '//', unless match.path.type is RegularExpression"
type HTTPPathMatch struct {
	// Type is Exact, PathPrefix or RegularExpression; defaults to PathPrefix.
	// +kubebuilder:validation:Enum=Exact;PathPrefix;RegularExpression
	// +kubebuilder:default=PathPrefix
	// +optional
	Type string `json:"type,omitempty"`

	// Value is the path, or the regular expression; defaults to /.
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:default="/"
	// +optional
	Value string `json:"value,omitempty"`
}

// HTTPHeaderMatch matches one request header.
type HTTPHeaderMatch struct {
	// Type is Exact or RegularExpression; defaults to Exact.
	// +kubebuilder:validation:Enum=Exact;RegularExpression
	// +kubebuilder:default=Exact
	// +optional
	Type string `json:"type,omitempty"`

	// Name of the header, case-insensitive.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9!#$%&'*+\-.^_\x60|~]+$`
	// +required
	Name string `json:"name"`

	// Value the header must have, or match.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	// +required
	Value string `json:"value"`
}

// HTTPQueryParamMatch matches one query parameter.
type HTTPQueryParamMatch struct {
	// Type is Exact or RegularExpression; defaults to Exact.
	// +kubebuilder:validation:Enum=Exact;RegularExpression
	// +kubebuilder:default=Exact
	// +optional
	Type string `json:"type,omitempty"`

	// Name of the query parameter, case-sensitive.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9!#$%&'*+\-.^_\x60|~]+$`
	// +required
	Name string `json:"name"`

	// Value the parameter must have, or match.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +required
	Value string `json:"value"`
}

// HTTPRouteRetry is the retry policy of the rule, Gateway API's
// HTTPRouteRetry: an experimental field of Gateway API, which an API server
// with the standard channel's HTTPRoute CRD drops.
type HTTPRouteRetry struct {
	// Codes are the response status codes, from 400 to 599, to retry on.
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:Minimum=400
	// +kubebuilder:validation:items:Maximum=599
	// +optional
	Codes []int32 `json:"codes,omitempty"`

	// Attempts is the most times a request to a backend is retried.
	// +kubebuilder:validation:Minimum=1
	// +optional
	Attempts *int32 `json:"attempts,omitempty"`

	// Backoff is the least time between attempts, a Gateway API Duration
	// such as 100ms.
	// +kubebuilder:validation:Pattern=`^([0-9]{1,5}(h|m|s|ms)){1,4}$`
	// +optional
	Backoff string `json:"backoff,omitempty"`
}

// HTTPHeaderModifiers change the headers of requests and responses.
type HTTPHeaderModifiers struct {
	// Request headers to change before the request reaches the backend.
	// +optional
	Request *HTTPHeaderFilter `json:"request,omitempty"`

	// Response headers to change before the response reaches the client.
	// +optional
	Response *HTTPHeaderFilter `json:"response,omitempty"`
}

// HTTPHeaderFilter is Gateway API's HTTPHeaderFilter: headers to set, add
// and remove.
type HTTPHeaderFilter struct {
	// Set overwrites these headers. One entry per name.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Set []HTTPHeader `json:"set,omitempty"`

	// Add appends these headers to the values already present. One entry
	// per name.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Add []HTTPHeader `json:"add,omitempty"`

	// Remove removes the headers of these names.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=256
	// +optional
	Remove []string `json:"remove,omitempty"`
}

// HTTPHeader is a header name and value.
type HTTPHeader struct {
	// Name of the header.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9!#$%&'*+\-.^_\x60|~]+$`
	// +required
	Name string `json:"name"`

	// Value of the header.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	// +required
	Value string `json:"value"`
}

// HTTPURLRewrite is Gateway API's HTTPURLRewriteFilter: the host and path
// the backend sees.
type HTTPURLRewrite struct {
	// Hostname replaces the Host header.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Hostname string `json:"hostname,omitempty"`

	// Path rewrites the request path.
	// +optional
	Path *HTTPPathModifier `json:"path,omitempty"`
}

// HTTPPathModifier replaces the whole path or its matched prefix.
// +kubebuilder:validation:XValidation:rule="self.type == 'ReplaceFullPath' ? has(self.replaceFullPath) && !has(self.replacePrefixMatch) : has(self.replacePrefixMatch) && !has(self.replaceFullPath)",message="rewrite.path needs replaceFullPath with type ReplaceFullPath, or replacePrefixMatch with type ReplacePrefixMatch, and not the other"
type HTTPPathModifier struct {
	// Type is ReplaceFullPath or ReplacePrefixMatch.
	// +kubebuilder:validation:Enum=ReplaceFullPath;ReplacePrefixMatch
	// +required
	Type string `json:"type"`

	// ReplaceFullPath is the path sent to the backend.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	ReplaceFullPath *string `json:"replaceFullPath,omitempty"`

	// ReplacePrefixMatch replaces the prefix that routing.match's path
	// matched (a PathPrefix match, or / without match).
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	ReplacePrefixMatch *string `json:"replacePrefixMatch,omitempty"`
}

// HTTPCORSFilter is Gateway API's HTTPCORSFilter: the gateway answers CORS
// preflight requests and adds the CORS headers to responses.
type HTTPCORSFilter struct {
	// AllowOrigins are the origins allowed, such as https://example.com,
	// https://*.example.com, or *.
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="!('*' in self && self.size() > 1)",message="corsPolicy.allowOrigins cannot have '*' alongside other origins"
	// +optional
	AllowOrigins []string `json:"allowOrigins,omitempty"`

	// AllowCredentials lets the browser expose the response to the page
	// when the request carried credentials.
	// +optional
	AllowCredentials *bool `json:"allowCredentials,omitempty"`

	// AllowMethods are the methods allowed, or *.
	// +kubebuilder:validation:MaxItems=9
	// +kubebuilder:validation:items:Enum=GET;HEAD;POST;PUT;DELETE;CONNECT;OPTIONS;TRACE;PATCH;*
	// +kubebuilder:validation:XValidation:rule="!('*' in self && self.size() > 1)",message="corsPolicy.allowMethods cannot have '*' alongside other methods"
	// +optional
	AllowMethods []string `json:"allowMethods,omitempty"`

	// AllowHeaders are the request headers allowed, or *.
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="!('*' in self && self.size() > 1)",message="corsPolicy.allowHeaders cannot have '*' alongside other headers"
	// +optional
	AllowHeaders []string `json:"allowHeaders,omitempty"`

	// ExposeHeaders are the response headers the page may read, or *.
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=256
	// +optional
	ExposeHeaders []string `json:"exposeHeaders,omitempty"`

	// MaxAge is how many seconds the browser may cache the preflight
	// answer; defaults to 5, as in Gateway API.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=5
	// +optional
	MaxAge int32 `json:"maxAge,omitempty"`
}
