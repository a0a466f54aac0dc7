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

package gitops

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/record"
)

// This file is the promotion of a group's release to a stage: one
// commit, one branch and one pull request (or push) that set every
// member's images in the stage's paths, each planned (PlanPromotion) on
// the files the members before it changed, as a group's revert is.

// branch is the promotion's branch: the Canary's, or the release's.
func (j *promotionJob) branch() string {
	if g := j.promote.Group; g != "" {
		return ReleasePromoteBranch(j.promote.Canary.Namespace, g, j.promote.Stage.Stage, j.source)
	}
	return PromoteBranch(j.promote.Canary, j.promote.Stage.Stage, j.source)
}

// plan plans the promotion on head: the Canary's images, then each
// member's on the files the ones before changed. UpToDate when every
// target already runs its images.
func (j *promotionJob) plan(ctx context.Context, head *object.Commit) (*Plan, error) {
	helm, err := j.helmPromotion(ctx)
	if err != nil {
		return nil, err
	}
	own := PromotionInput{Head: head, Path: j.src.Path, Target: j.target, Images: j.promote.Images, MaxFileSize: j.maxFile, HelmRelease: helm, Charts: j.charts, GitRepository: j.src.GitRepository}
	if len(j.members) == 0 {
		return PlanPromotion(ctx, own)
	}
	inputs := []PromotionInput{own}
	names := []string{j.promote.Canary.Name}
	for _, m := range j.members {
		inputs = append(inputs, PromotionInput{Path: m.path, Target: m.target, Images: m.images, MaxFileSize: j.maxFile})
		names = append(names, m.canary.Name)
	}
	files := map[string][]byte{}
	var notes []string
	cur := head
	for i, in := range inputs {
		in.Head = cur
		p, err := PlanPromotion(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("member %s of group %s: %w", names[i], j.promote.Group, err)
		}
		if p.UpToDate {
			notes = append(notes, fmt.Sprintf("%s already runs %s: left as it is.", in.Target, strings.Join(in.Images, ", ")))
			continue
		}
		next, err := j.repo.CommitFiles(cur, p.Files, j.author, j.now(), "serin: release promotion in progress")
		if err != nil {
			return nil, err
		}
		cur = next
		for _, f := range p.Files {
			files[f.Path] = f.Content
		}
		notes = append(notes, p.Notes...)
	}
	if len(files) == 0 {
		return &Plan{UpToDate: true}, nil
	}
	return &Plan{Strategy: StrategyEdit, Files: fileChanges(files), Notes: notes}, nil
}

// releaseMessage is the message of a release's promotion: the release,
// each member's target and images, the analyses that promoted them, and
// the group's trailers.
func (j *promotionJob) releaseMessage(plan *Plan) string {
	c := j.promote.Canary
	var b strings.Builder
	fmt.Fprintf(&b, "serin: promote release %s of CanaryGroup %s to %s\n\n", ShortSHA(j.source), j.promote.Group, j.promote.Stage.Stage)
	fmt.Fprintf(&b, "CanaryGroup %s/%s promoted release %s whole; this writes every member's images to %s:\n\n",
		c.Namespace, j.promote.Group, j.promote.Revision, j.promote.Stage.Stage)
	fmt.Fprintf(&b, "- %s (Canary %s): %s\n", j.target, c.Name, strings.Join(j.promote.Images, ", "))
	for _, m := range j.members {
		fmt.Fprintf(&b, "- %s (Canary %s): %s\n", m.target, m.canary.Name, strings.Join(m.images, ", "))
	}
	analyses := map[string][]string{c.Name: analysisLines(&c.Status, j.promote.Revision)}
	for _, m := range j.members {
		analyses[m.canary.Name] = analysisLines(&m.canary.Status, m.canary.Status.LastPromotedRevision)
	}
	header := false
	for _, name := range append([]string{c.Name}, memberNamesOf(j.members)...) {
		if len(analyses[name]) == 0 {
			continue
		}
		if !header {
			b.WriteString("\nThe analyses that promoted them:\n")
			header = true
		}
		fmt.Fprintf(&b, "\n%s:\n", name)
		for _, l := range analyses[name] {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	for _, n := range append(slices.Clone(plan.Notes), j.elsewhere...) {
		fmt.Fprintf(&b, "\n%s\n", n)
	}
	fmt.Fprintf(&b, "\n%s: %s/%s\nSerin-Stage: %s\nSerin-Promotes: %s\n", trailerGroup, c.Namespace, j.promote.Group, j.promote.Stage.Stage, j.source)
	return b.String()
}

// memberNamesOf names the members, in order.
func memberNamesOf(ms []promotedMember) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.canary.Name
	}
	return out
}

// analysisLines are the decisive lines of the analysis of revision, when
// it is the Canary's latest.
func analysisLines(st *v1alpha1.CanaryStatus, revision string) []string {
	rec := record.Latest(st)
	if rec == nil || rec.Revision != revision {
		return nil
	}
	return record.Lines(record.Decisive(rec))
}
