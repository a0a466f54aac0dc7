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

import (
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CanaryGroupKind is the kind of a CanaryGroup.
const CanaryGroupKind = "CanaryGroup"

// DefaultGroupWindow is how long a release waits for the members that
// changed with it before its first step, when spec.window is not set.
const DefaultGroupWindow = 10 * time.Second

// CanaryGroupSpec lists the Canaries released as one.
// +kubebuilder:validation:XValidation:rule="self.members.all(m, self.members.exists_one(o, o.name == m.name))",message="spec.members: a Canary is listed once"
// +kubebuilder:validation:XValidation:rule="self.members.all(m, !has(m.dependsOn) || m.dependsOn.all(d, d != m.name))",message="spec.members[].dependsOn: a member cannot depend on itself"
// +kubebuilder:validation:XValidation:rule="self.members.all(m, !has(m.dependsOn) || m.dependsOn.all(d, self.members.exists(o, o.name == d)))",message="spec.members[].dependsOn names a Canary that is not a member of this group: list it in spec.members or remove it from dependsOn"
type CanaryGroupSpec struct {
	// Members are the Canaries of the group, in the group's namespace. A
	// Canary is a member of one group at most.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	Members []GroupMember `json:"members"`

	// Window is how long, after the first member of a release started,
	// the release waits for the other members that change with it before
	// any member takes its first step; changes of members without a Flux
	// revision that start within it are one release. Defaults to 10s.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m))+$"
	// +kubebuilder:validation:XValidation:rule="duration(self) <= duration('10m')",message="spec.window is at most 10m"
	// +optional
	Window *metav1.Duration `json:"window,omitempty"`
}

// GroupMember is one Canary of a group.
type GroupMember struct {
	// Name of a Canary in the group's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`

	// DependsOn names members whose new revision must be promoted before
	// this member's analysis starts (Flux's word): a dependent member of a
	// release starts once they succeeded, and never starts when one fails.
	// A member that did not change sits the release out and counts as done.
	// +kubebuilder:validation:MaxItems=32
	// +listType=set
	// +optional
	DependsOn []string `json:"dependsOn,omitempty"`
}

// GroupStatus is a member Canary's place in its group's release.
type GroupStatus struct {
	// Name of the CanaryGroup.
	Name string `json:"name"`
	// Release identifies the release the member's rollout belongs to: the
	// Flux revision it started with, or, without one, the time the
	// release began.
	// +optional
	Release string `json:"release,omitempty"`
	// StartedAt is when the member joined the release.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// StepsPassed counts the analysis steps of this release whose checks
	// passed.
	// +optional
	StepsPassed int `json:"stepsPassed,omitempty"`
	// Holding is Step or Promotion while a step passed and the member
	// waits for the other members of the release (lockstep).
	// +optional
	Holding string `json:"holding,omitempty"`
	// WaitingFor names the members this one waits for (dependsOn).
	// +optional
	WaitingFor []string `json:"waitingFor,omitempty"`
	// FailedBy names the member whose failure rolled this one back.
	// +optional
	FailedBy string `json:"failedBy,omitempty"`
}

// Holding values of GroupStatus.
const (
	HoldingStep      = "Step"
	HoldingPromotion = "Promotion"
)

// CanaryGroupStatus is the observed state of a group and its last releases.
type CanaryGroupStatus struct {
	// ObservedGeneration is the last generation reconciled.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Phase of the current (or last) release: Initialized before the
	// first, then Progressing, Succeeded, Failed or Halted.
	// +optional
	Phase CanaryPhase `json:"phase,omitempty"`

	// Release is the current (or last) release.
	// +optional
	Release *GroupRelease `json:"release,omitempty"`

	// History holds the releases before the current one, newest first.
	// +kubebuilder:validation:MaxItems=5
	// +optional
	History []GroupRelease `json:"history,omitempty"`

	// Conditions are Ready, Reconciling and Stalled (kstatus), so that a
	// Flux health check or dependsOn can wait for a release.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// GroupRelease is one release of a group: the members that changed with
// one revision and how each ended.
type GroupRelease struct {
	// Revision is the Flux revision of the release, or the time it began.
	Revision string `json:"revision"`
	// Phase is the release's verdict so far.
	Phase CanaryPhase `json:"phase"`
	// StartedAt is when its first member started.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// FinishedAt is when its verdict was reached.
	// +optional
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
	// Message says what decided.
	// +optional
	Message string `json:"message,omitempty"`
	// DecidedBy names the member whose result decided a Failed or Halted
	// release.
	// +optional
	DecidedBy string `json:"decidedBy,omitempty"`
	// Members are the members that changed with the release.
	// +optional
	Members []GroupReleaseMember `json:"members,omitempty"`
	// RevertURL is the pull request (or branch) that reverts the release
	// in Git, when one was opened.
	// +optional
	RevertURL string `json:"revertURL,omitempty"`
	// Stages are the release's promotions to the next stages of its
	// members' spec.gitops.promote: one per stage, written by one member
	// for every member of the release, with the stage's verdict.
	// +optional
	Stages []GroupReleaseStage `json:"stages,omitempty"`
}

// GroupReleaseStage is the promotion of a release to a next stage.
type GroupReleaseStage struct {
	// Stage is the stage's name (spec.gitops.promote[].stage).
	Stage string `json:"stage"`
	// Phase is the promotion's phase, as status.promotions[].phase.
	Phase string `json:"phase"`
	// WrittenBy is the member that writes the promotion.
	WrittenBy string `json:"writtenBy"`
	// Members are the members whose images the promotion carries.
	// +optional
	Members []string `json:"members,omitempty"`
	// PullRequestURL is the promotion's pull request.
	// +optional
	PullRequestURL string `json:"pullRequestURL,omitempty"`
	// StageCommit is the commit of the stage's branch whose commit
	// statuses gave the verdict.
	// +optional
	StageCommit string `json:"stageCommit,omitempty"`
	// Message explains the phase.
	// +optional
	Message string `json:"message,omitempty"`
}

// GroupReleaseMember is a member's state within a release.
type GroupReleaseMember struct {
	// Name of the member Canary.
	Name string `json:"name"`
	// Phase of the member.
	Phase CanaryPhase `json:"phase"`
	// Weight is the canary's traffic percentage.
	// +optional
	Weight int `json:"weight,omitempty"`
	// StepsPassed counts the member's passed steps in the release.
	// +optional
	StepsPassed int `json:"stepsPassed,omitempty"`
	// Message is the member's Ready message.
	// +optional
	Message string `json:"message,omitempty"`
}

// CanaryGroup releases several Canaries as one: the members that change
// with one Flux revision start together, step in lockstep (or after the
// members they depend on), and are promoted, rolled back or halted as one.
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=cg
// +kubebuilder:printcolumn:name="Status",type="string",JSONPath=".status.phase"
// +kubebuilder:printcolumn:name="Revision",type="string",JSONPath=".status.release.revision"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type CanaryGroup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   CanaryGroupSpec   `json:"spec,omitempty"`
	Status CanaryGroupStatus `json:"status,omitempty"`
}

// GetConditions returns the status conditions (Flux's conditions.Getter).
func (in *CanaryGroup) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions sets the status conditions (Flux's conditions.Setter).
func (in *CanaryGroup) SetConditions(c []metav1.Condition) { in.Status.Conditions = c }

// GetWindow returns spec.window or its default.
func (in *CanaryGroup) GetWindow() time.Duration {
	if in.Spec.Window != nil && in.Spec.Window.Duration > 0 {
		return in.Spec.Window.Duration
	}
	return DefaultGroupWindow
}

// Member returns the member of the given name.
func (in *CanaryGroup) Member(name string) (GroupMember, bool) {
	for _, m := range in.Spec.Members {
		if m.Name == name {
			return m, true
		}
	}
	return GroupMember{}, false
}

// IsReady reports the Ready condition (for printers).
func (in *CanaryGroup) IsReady() bool {
	for _, c := range in.Status.Conditions {
		if c.Type == meta.ReadyCondition {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

// CanaryGroupList contains a list of CanaryGroup.
// +kubebuilder:object:root=true
type CanaryGroupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []CanaryGroup `json:"items"`
}

func init() {
	knownTypes = append(knownTypes, &CanaryGroup{}, &CanaryGroupList{})
}
