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
	"slices"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// groupView is a CanaryGroup as the pages show it: its release, with each
// member's analysis steps on the release's time line, and the earlier
// releases.
type groupView struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Phase     string `json:"phase"`
	Ready     string `json:"ready"`
	Message   string `json:"message"`
	// Members are spec.members' names, in the group's order.
	Members []string `json:"members"`
	// Release is the current (or last) release; none before the first.
	Release *releaseView `json:"release,omitempty"`
	// History are the earlier releases, newest first, without steps.
	History []releaseView `json:"history"`
}

// releaseView is one release of a group.
type releaseView struct {
	Revision   string     `json:"revision"`
	Phase      string     `json:"phase"`
	StartedAt  *time.Time `json:"startedAt,omitempty"`
	FinishedAt *time.Time `json:"finishedAt,omitempty"`
	Message    string     `json:"message,omitempty"`
	DecidedBy  string     `json:"decidedBy,omitempty"`
	RevertURL  string     `json:"revertURL,omitempty"`
	// Members are the members the revision changed.
	Members []memberView `json:"members"`
	// SatOut are the members it did not change (the current release only).
	SatOut []string `json:"satOut"`
	// Stages are the release's promotions to the next stages, each with
	// its verdict (status.release.stages).
	Stages []v1alpha1.GroupReleaseStage `json:"stages"`
}

// memberView is a member's part in a release: the release's record of
// it, what it holds or waits for (its status.group), and, in the current
// release, its analysis steps (status.analyses[0]).
type memberView struct {
	Name        string   `json:"name"`
	Phase       string   `json:"phase"`
	Weight      int      `json:"weight"`
	StepsPassed int      `json:"stepsPassed"`
	Message     string   `json:"message,omitempty"`
	Holding     string   `json:"holding,omitempty"`
	WaitingFor  []string `json:"waitingFor,omitempty"`
	FailedBy    string   `json:"failedBy,omitempty"`
	// Steps are the member's analysis steps in the release, oldest first.
	Steps []memberStep `json:"steps"`
}

// memberStep is an analysis step on the group's time line.
type memberStep struct {
	At      time.Time `json:"at"`
	Weight  int       `json:"weight"`
	Verdict string    `json:"verdict"`
	Message string    `json:"message,omitempty"`
}

// groupViewOf lays out a group with its member Canaries, which canaries
// holds by namespace and name (a member that is not there shows no steps).
func groupViewOf(g *v1alpha1.CanaryGroup, canaries map[types.NamespacedName]*v1alpha1.Canary) groupView {
	v := groupView{
		Namespace: g.Namespace,
		Name:      g.Name,
		Phase:     string(g.Status.Phase),
		Ready:     string(metav1.ConditionUnknown),
		Message:   "waiting to be reconciled",
		Members:   []string{},
		History:   []releaseView{},
	}
	if ready := apimeta.FindStatusCondition(g.Status.Conditions, meta.ReadyCondition); ready != nil {
		v.Ready, v.Message = string(ready.Status), ready.Message
	}
	for _, m := range g.Spec.Members {
		v.Members = append(v.Members, m.Name)
	}
	if r := g.Status.Release; r != nil {
		release := releaseViewOf(r)
		for i := range release.Members {
			key := types.NamespacedName{Namespace: g.Namespace, Name: release.Members[i].Name}
			if c, ok := canaries[key]; ok {
				addMemberState(&release.Members[i], g.Name, r.Revision, c)
			}
		}
		for _, name := range v.Members {
			if !slices.ContainsFunc(r.Members, func(m v1alpha1.GroupReleaseMember) bool { return m.Name == name }) {
				release.SatOut = append(release.SatOut, name)
			}
		}
		v.Release = &release
	}
	for i := range g.Status.History {
		v.History = append(v.History, releaseViewOf(&g.Status.History[i]))
	}
	return v
}

func releaseViewOf(r *v1alpha1.GroupRelease) releaseView {
	v := releaseView{
		Revision: r.Revision, Phase: string(r.Phase), Message: r.Message,
		DecidedBy: r.DecidedBy, RevertURL: r.RevertURL,
		StartedAt: timeOf(r.StartedAt), FinishedAt: timeOf(r.FinishedAt),
		Members: []memberView{}, SatOut: []string{}, Stages: append([]v1alpha1.GroupReleaseStage{}, r.Stages...),
	}
	for _, m := range r.Members {
		v.Members = append(v.Members, memberView{Name: m.Name, Phase: string(m.Phase), Weight: m.Weight,
			StepsPassed: m.StepsPassed, Message: m.Message, Steps: []memberStep{}})
	}
	return v
}

// addMemberState adds what the member Canary says of its part in the
// release: its group status and the steps of its analysis record, when
// both are the release's (a record older than the member's joining is
// an earlier rollout's).
func addMemberState(m *memberView, group, revision string, c *v1alpha1.Canary) {
	st := c.Status.Group
	if st == nil || st.Name != group || st.Release != revision {
		return
	}
	m.Holding, m.WaitingFor, m.FailedBy = st.Holding, st.WaitingFor, st.FailedBy
	if len(c.Status.Analyses) == 0 {
		return
	}
	rec := &c.Status.Analyses[0]
	if st.StartedAt != nil && rec.StartedAt.Time.Before(st.StartedAt.Time) {
		return
	}
	for _, s := range rec.Steps {
		m.Steps = append(m.Steps, memberStep{At: s.At.Time, Weight: s.Weight, Verdict: s.Verdict, Message: s.Message})
	}
}

func timeOf(t *metav1.Time) *time.Time {
	if t == nil {
		return nil
	}
	at := t.Time
	return &at
}
