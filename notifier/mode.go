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

package notifier

import (
	"fmt"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// Mode says where a Canary's events go besides Kubernetes Events.
type Mode string

const (
	// ModeOwner sends Flux events to notification-controller attributed to
	// the Kustomization or HelmRelease that applied the Canary's target, so
	// that the Alerts users already have for it (eventSources can only name
	// Flux kinds) and commit-status Providers receive them. A target that no
	// Flux object applied falls back to ModeCanary.
	ModeOwner Mode = "owner"
	// ModeCanary sends Flux events about the Canary itself, for clusters
	// whose Alert CRD accepts kind Canary in eventSources.
	ModeCanary Mode = "canary"
	// ModeDirect sends nothing to notification-controller: events go only
	// to the Providers named in the Canary's spec.alerts.
	ModeDirect Mode = "direct"
)

// Modes lists the valid modes, for flag help.
var Modes = []Mode{ModeOwner, ModeCanary, ModeDirect}

// ParseMode returns the Mode named s.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ModeOwner, ModeCanary, ModeDirect:
		return m, nil
	}
	return "", fmt.Errorf("unknown notification mode %q: want one of %v", s, Modes)
}

// modeOf returns the mode for a Canary: its serin.dev/notification-mode
// annotation when that names a mode, the default otherwise. The error says
// why an annotation was ignored.
func modeOf(c *v1alpha1.Canary, def Mode) (Mode, error) {
	v, ok := c.GetAnnotations()[v1alpha1.NotificationModeAnnotation]
	if !ok {
		return def, nil
	}
	m, err := ParseMode(v)
	if err != nil {
		return def, fmt.Errorf("ignoring annotation %s: %w", v1alpha1.NotificationModeAnnotation, err)
	}
	return m, nil
}

// Allows says whether an alert of the given severity receives an event:
// info receives every event, warn waits and failures, error failures only.
// An empty severity is info, the API default.
func Allows(alert v1alpha1.AlertSeverity, e Severity) bool {
	switch Severity(alert) {
	case SeverityError:
		return e == SeverityError
	case SeverityWarn:
		return e == SeverityWarn || e == SeverityError
	default:
		return true
	}
}
