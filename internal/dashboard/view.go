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

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/agentrequest"
	"github.com/serin-dev/serin/internal/record"
)

// The JSON the pages and the API get. The server derives every field from
// the Canary, so the pages' scripts only lay it out.

// summary is a Canary's row in the list.
type summary struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Phase     string `json:"phase"`
	Weight    int    `json:"weight"`
	// Revision is status.lastAttemptedRevision, else the promoted one.
	Revision  string      `json:"revision"`
	Ready     string      `json:"ready"`
	Message   string      `json:"message"`
	Suspended bool        `json:"suspended"`
	Revert    *revertView `json:"revert,omitempty"`
	// Group is the name of the Canary's CanaryGroup (status.group.name).
	Group string `json:"group,omitempty"`
}

type revertView struct {
	State          string `json:"state"`
	PullRequestURL string `json:"pullRequestURL,omitempty"`
	Message        string `json:"message,omitempty"`
}

// detail is the page of one Canary.
type detail struct {
	summary
	Target           string          `json:"target"`
	PromotedRevision string          `json:"promotedRevision"`
	FailedChecks     int             `json:"failedChecks"`
	Threshold        int             `json:"threshold"`
	MaxWeight        int             `json:"maxWeight"`
	Interval         string          `json:"interval"`
	Conditions       []conditionView `json:"conditions"`
	Requests         []requestView   `json:"requests"`
	// GroupStatus is the Canary's place in its group's release.
	GroupStatus *v1alpha1.GroupStatus `json:"groupStatus,omitempty"`
	// Rollouts are the analysis records, newest first.
	Rollouts []rolloutView `json:"rollouts"`
	// Wave are the next stages of the promoted revision, in the order of
	// spec.gitops.promote; empty when the Canary has none.
	Wave []stageView `json:"wave"`
}

// stageView is a stage of the Canary's wave: where the promoted revision
// stands in it (status.promotions), with the links to its pull request and
// to the page the stage's Canary gave with its verdict.
type stageView struct {
	Stage string `json:"stage"`
	// Phase is status.promotions[].phase; empty while the stage waits for
	// the next promoted revision (it was added since the last one).
	Phase          string `json:"phase,omitempty"`
	Revision       string `json:"revision,omitempty"`
	Message        string `json:"message,omitempty"`
	PullRequestURL string `json:"pullRequestURL,omitempty"`
	Branch         string `json:"branch,omitempty"`
	Commit         string `json:"commit,omitempty"`
	// StageCommit is the commit of the stage's branch whose status gave
	// the verdict, URL the link that came with it.
	StageCommit string `json:"stageCommit,omitempty"`
	URL         string `json:"url,omitempty"`
	// SoakUntil is when a Soaking stage is promoted.
	SoakUntil *time.Time `json:"soakUntil,omitempty"`
	// Attempts are the failed writes being retried, the next at
	// NextAttemptTime.
	Attempts        int32      `json:"attempts,omitempty"`
	NextAttemptTime *time.Time `json:"nextAttemptTime,omitempty"`
	// Since is when the phase last changed.
	Since *time.Time `json:"since,omitempty"`
}

type conditionView struct {
	Type    string    `json:"type"`
	Status  string    `json:"status"`
	Reason  string    `json:"reason"`
	Message string    `json:"message"`
	Since   time.Time `json:"since"`
}

// requestView is a button of the page: what it asks, the request the agent
// has not handled yet (its annotation value) and the last one it handled.
type requestView struct {
	Verb    string `json:"verb"`
	Short   string `json:"short"`
	Pending string `json:"pending,omitempty"`
	Handled string `json:"handled,omitempty"`
}

// rolloutView is one analysis record, with its values read as numbers and
// gathered into a series for each check.
type rolloutView struct {
	Revision     string     `json:"revision"`
	StartedAt    time.Time  `json:"startedAt"`
	FinishedAt   *time.Time `json:"finishedAt,omitempty"`
	Result       string     `json:"result,omitempty"`
	Message      string     `json:"message,omitempty"`
	OmittedSteps int        `json:"omittedSteps,omitempty"`
	Steps        []stepView `json:"steps"`
	Series       []series   `json:"series"`
	// Decisive describes the step that decided the rollout, a line per
	// check and webhook.
	Decisive []string `json:"decisive"`
}

type stepView struct {
	At        time.Time                `json:"at"`
	Weight    int                      `json:"weight"`
	Iteration int                      `json:"iteration,omitempty"`
	Verdict   string                   `json:"verdict"`
	Message   string                   `json:"message,omitempty"`
	Checks    []checkView              `json:"checks"`
	Webhooks  []v1alpha1.WebhookResult `json:"webhooks"`
}

type checkView struct {
	v1alpha1.CheckResult
	// Line is the check in words: "error-rate 0.5 (max 1): Passed".
	Line string `json:"line"`
}

// series is one check's values across a rollout's steps, against its
// range (the range of its last step).
type series struct {
	Name   string   `json:"name"`
	Min    *float64 `json:"min"`
	Max    *float64 `json:"max"`
	Points []point  `json:"points"`
}

// point is a check's value at a step; Value is null when the query gave
// none.
type point struct {
	At      time.Time `json:"at"`
	Weight  int       `json:"weight"`
	Value   *float64  `json:"value"`
	Verdict string    `json:"verdict"`
}

func summaryOf(c *v1alpha1.Canary) summary {
	s := summary{
		Namespace: c.Namespace,
		Name:      c.Name,
		Phase:     string(c.Status.Phase),
		Weight:    c.Status.CanaryWeight,
		Revision:  c.Status.LastAttemptedRevision,
		Ready:     string(metav1.ConditionUnknown),
		Message:   "waiting to be reconciled",
		Suspended: c.Spec.Suspend,
	}
	if s.Revision == "" {
		s.Revision = c.Status.LastPromotedRevision
	}
	if ready := apimeta.FindStatusCondition(c.Status.Conditions, meta.ReadyCondition); ready != nil {
		s.Ready, s.Message = string(ready.Status), ready.Message
	}
	if r := c.Status.Revert; r != nil {
		s.Revert = &revertView{State: r.State, PullRequestURL: r.PullRequestURL, Message: r.Message}
	}
	if g := c.Status.Group; g != nil {
		s.Group = g.Name
	}
	return s
}

func detailOf(c *v1alpha1.Canary) detail {
	d := detail{
		summary:          summaryOf(c),
		Target:           c.Spec.TargetRef.Kind + "/" + c.Spec.TargetRef.Name,
		PromotedRevision: c.Status.LastPromotedRevision,
		FailedChecks:     c.Status.FailedChecks,
		Threshold:        c.GetThreshold(),
		MaxWeight:        c.GetMaxWeight(),
		Interval:         c.GetAnalysisInterval().String(),
		Conditions:       []conditionView{},
		Requests:         []requestView{},
		Rollouts:         []rolloutView{},
		GroupStatus:      c.Status.Group,
		Wave:             waveOf(c),
	}
	for _, cond := range c.Status.Conditions {
		d.Conditions = append(d.Conditions, conditionView{
			Type: cond.Type, Status: string(cond.Status), Reason: cond.Reason,
			Message: cond.Message, Since: cond.LastTransitionTime.Time,
		})
	}
	for _, r := range agentrequest.All {
		d.Requests = append(d.Requests, requestView{
			Verb: r.Verb, Short: r.Short, Pending: r.Pending(c),
			Handled: r.HandledValue(c),
		})
	}
	for i := range c.Status.Analyses {
		d.Rollouts = append(d.Rollouts, rolloutOf(&c.Status.Analyses[i]))
	}
	return d
}

// waveOf lays out the stages of the Canary's wave: those of
// spec.gitops.promote in its order, then any the status still has that the
// spec no longer lists.
func waveOf(c *v1alpha1.Canary) []stageView {
	wave := []stageView{}
	var stages []string
	if c.Spec.GitOps != nil {
		for _, target := range c.Spec.GitOps.Promote {
			stages = append(stages, target.Stage)
		}
	}
	for _, p := range c.Status.Promotions {
		if !slices.Contains(stages, p.Stage) {
			stages = append(stages, p.Stage)
		}
	}
	for _, stage := range stages {
		i := slices.IndexFunc(c.Status.Promotions, func(p v1alpha1.PromotionStatus) bool { return p.Stage == stage })
		if i < 0 {
			wave = append(wave, stageView{Stage: stage})
			continue
		}
		p := &c.Status.Promotions[i]
		wave = append(wave, stageView{
			Stage: p.Stage, Phase: p.Phase, Revision: p.Revision, Message: p.Message,
			PullRequestURL: p.PullRequestURL, Branch: p.Branch, Commit: p.Commit,
			StageCommit: p.StageCommit, URL: p.URL,
			SoakUntil: timeOf(p.SoakUntil), Attempts: p.Attempts, NextAttemptTime: timeOf(p.NextAttemptTime),
			Since: timeOf(p.LastTransitionTime),
		})
	}
	return wave
}

func rolloutOf(rec *v1alpha1.AnalysisRecord) rolloutView {
	r := rolloutView{
		Revision:     rec.Revision,
		StartedAt:    rec.StartedAt.Time,
		Result:       string(rec.Result),
		Message:      rec.Message,
		OmittedSteps: rec.OmittedSteps,
		Steps:        []stepView{},
		Series:       []series{},
		Decisive:     record.Lines(record.Decisive(rec)),
	}
	if rec.FinishedAt != nil {
		finished := rec.FinishedAt.Time
		r.FinishedAt = &finished
	}
	if r.Decisive == nil {
		r.Decisive = []string{}
	}
	byName := map[string]int{}
	for _, step := range rec.Steps {
		view := stepView{
			At: step.At.Time, Weight: step.Weight, Iteration: step.Iteration,
			Verdict: step.Verdict, Message: step.Message,
			Checks: []checkView{}, Webhooks: step.Webhooks,
		}
		if view.Webhooks == nil {
			view.Webhooks = []v1alpha1.WebhookResult{}
		}
		for _, check := range step.Checks {
			view.Checks = append(view.Checks, checkView{CheckResult: check, Line: record.CheckLine(check)})
			i, ok := byName[check.Name]
			if !ok {
				i = len(r.Series)
				byName[check.Name] = i
				r.Series = append(r.Series, series{Name: check.Name, Points: []point{}})
			}
			s := &r.Series[i]
			s.Min, s.Max = number(check.Min), number(check.Max)
			s.Points = append(s.Points, point{At: step.At.Time, Weight: step.Weight, Value: number(check.Value), Verdict: check.Verdict})
		}
		r.Steps = append(r.Steps, view)
	}
	return r
}

// number reads a decimal of the record; nil when empty or malformed.
func number(s string) *float64 {
	v, ok := record.ParseValue(s)
	if !ok {
		return nil
	}
	return &v
}
