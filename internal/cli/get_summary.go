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

package cli

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// summaryList is what `serin get canaries -o json|yaml` and `serin get
// groups -o json|yaml` print: an object whose items are the rows, in the
// order of the table. An empty list is {"items": []}.
type summaryList[S any] struct {
	Items []S `json:"items"`
}

// canarySummary is a Canary as the structured outputs print it: the cells
// of its row in `serin get canaries`, unabridged and typed, then the
// Canary itself. Every field is always present, so that scripts need no
// defaults.
type canarySummary struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Group is status.group.name; empty when the Canary is in none.
	Group string `json:"group"`
	// Revision is the REVISION column: status.lastAttemptedRevision, else
	// status.lastPromotedRevision; never cut.
	Revision string `json:"revision"`
	// PromotedRevision is status.lastPromotedRevision.
	PromotedRevision string `json:"promotedRevision"`
	Phase            string `json:"phase"`
	Weight           int    `json:"weight"`
	// FailedChecks and Threshold: the failed checks of the current
	// analysis, and how many it allows.
	FailedChecks int  `json:"failedChecks"`
	Threshold    int  `json:"threshold"`
	Suspended    bool `json:"suspended"`
	// Ready is the status of the Ready condition: True, False or Unknown;
	// False before the first reconciliation.
	Ready   string `json:"ready"`
	Message string `json:"message"`
	// Wave is the WAVE column: each stage of status.promotions with its
	// phase; empty before the first promotion or without stages.
	Wave []waveStageSummary `json:"wave"`
	// Object is the Canary, without its managed fields; nil in a row.
	Object *v1alpha1.Canary `json:"object"`
}

// waveStageSummary is where the promoted revision stands in one stage.
type waveStageSummary struct {
	Stage    string `json:"stage"`
	Phase    string `json:"phase"`
	Revision string `json:"revision"`
}

// summarizeCanary is the summary of a Canary, the Canary included.
func summarizeCanary(canary *v1alpha1.Canary) canarySummary {
	s := canaryCells(canary)
	s.Object = canary.DeepCopy()
	prepareForOutput(s.Object, v1alpha1.CanaryKind)
	return s
}

// canaryCells is the summary of a Canary without the Canary: what its row
// shows.
func canaryCells(canary *v1alpha1.Canary) canarySummary {
	st := canary.Status
	revision := st.LastAttemptedRevision
	if revision == "" {
		revision = st.LastPromotedRevision
	}
	group := ""
	if st.Group != nil {
		group = st.Group.Name
	}
	ready, message := readyStatusAndMessage(st.Conditions)
	wave := make([]waveStageSummary, len(st.Promotions))
	for i, p := range st.Promotions {
		wave[i] = waveStageSummary{Stage: p.Stage, Phase: p.Phase, Revision: p.Revision}
	}
	return canarySummary{
		Namespace:        canary.Namespace,
		Name:             canary.Name,
		Group:            group,
		Revision:         revision,
		PromotedRevision: st.LastPromotedRevision,
		Phase:            string(st.Phase),
		Weight:           st.CanaryWeight,
		FailedChecks:     st.FailedChecks,
		Threshold:        canary.GetThreshold(),
		Suspended:        canary.Spec.Suspend,
		Ready:            ready,
		Message:          message,
		Wave:             wave,
	}
}

// groupSummary is a CanaryGroup as the structured outputs print it: the
// cells of its row in `serin get groups`, unabridged and typed, then the
// CanaryGroup itself.
type groupSummary struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Revision is status.release.revision; empty before the first release.
	Revision string `json:"revision"`
	Phase    string `json:"phase"`
	// Members are the members of the release (status.release.members);
	// before the first release, the members of the spec, without phase.
	Members []memberSummary `json:"members"`
	// DecidedBy is the member whose verdict ended the release.
	DecidedBy string `json:"decidedBy"`
	Ready     string `json:"ready"`
	Message   string `json:"message"`
	// Object is the CanaryGroup, without its managed fields; nil in a row.
	Object *v1alpha1.CanaryGroup `json:"object"`
}

// memberSummary is where a member of a group's release stands.
type memberSummary struct {
	Name        string `json:"name"`
	Phase       string `json:"phase"`
	Weight      int    `json:"weight"`
	StepsPassed int    `json:"stepsPassed"`
}

// summarizeGroup is the summary of a CanaryGroup, the group included.
func summarizeGroup(group *v1alpha1.CanaryGroup) groupSummary {
	s := groupCells(group)
	s.Object = group.DeepCopy()
	prepareForOutput(s.Object, v1alpha1.CanaryGroupKind)
	return s
}

// prepareForOutput sets the kind of an object a list left without one,
// and leaves out its managed fields, as kubectl get -o yaml does.
func prepareForOutput(object client.Object, kind string) {
	object.GetObjectKind().SetGroupVersionKind(v1alpha1.GroupVersion.WithKind(kind))
	object.SetManagedFields(nil)
}

// groupCells is the summary of a CanaryGroup without the group.
func groupCells(group *v1alpha1.CanaryGroup) groupSummary {
	s := groupSummary{Namespace: group.Namespace, Name: group.Name, Phase: string(group.Status.Phase),
		Members: []memberSummary{}}
	if release := group.Status.Release; release != nil {
		s.Revision, s.DecidedBy = release.Revision, release.DecidedBy
		for _, m := range release.Members {
			s.Members = append(s.Members, memberSummary{Name: m.Name, Phase: string(m.Phase), Weight: m.Weight, StepsPassed: m.StepsPassed})
		}
	} else {
		for _, m := range group.Spec.Members {
			s.Members = append(s.Members, memberSummary{Name: m.Name})
		}
	}
	s.Ready, s.Message = readyStatusAndMessage(group.Status.Conditions)
	return s
}
