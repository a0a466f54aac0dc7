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
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"k8s.io/apimachinery/pkg/types"
)

// Strategy is how a plan reverts the target.
type Strategy string

const (
	// StrategyRevert restores the files of the commits that changed the
	// target, as `git revert` of those commits would: every one of them
	// touched only files that define the target.
	StrategyRevert Strategy = "Revert"
	// StrategyEdit edits only the target's definition: the changed fields
	// of its manifest, or the changed entries of a kustomization (images:),
	// leaving the rest of each file as it is.
	StrategyEdit Strategy = "Edit"
)

// ErrUnverifiable means no change could be found that makes the target
// render as it did at the good revision while leaving everything else as
// it is: nothing is pushed.
var ErrUnverifiable = errors.New("cannot revert the target alone")

// ErrSameRendering means the bad commit renders the target exactly as the
// good one: the failure does not come from that commit.
var ErrSameRendering = errors.New("the bad commit renders the target as the good one")

// maxInfluenceRenders bounds the renders spent finding which changed files
// define the target; beyond it the origin annotations decide.
const maxInfluenceRenders = 64

// PlanInput is what the planner works on: a repository's history and the
// object to restore.
type PlanInput struct {
	// Path is the Kustomization's spec.path.
	Path string
	// Target is the object to restore.
	Target Target
	// Good is the last promoted commit; Bad the commit to revert; Head the
	// tip of the branch the change is made on (Bad or a descendant).
	Good, Bad, Head *object.Commit
	// MaxFileSize bounds a file read from a commit (0:
	// DefaultMaxFileSize); a larger one is never read.
	MaxFileSize int64
	// Rendered is, when Target is a HelmRelease, the object of its chart
	// the Canary targets: the plan renders the chart and compares that
	// object's rendering (and the others'), falling back to the chart's
	// inputs when the chart cannot be rendered. Nil compares the inputs.
	Rendered *Target
	// Charts downloads the charts of HelmRepositories; nil renders only
	// charts kept in Git.
	Charts ChartSource
	// GitRepository is the Kustomization's source: a HelmRelease's chart
	// kept in Git is rendered from the plan's commits only when its
	// sourceRef names this GitRepository.
	GitRepository types.NamespacedName
}

// FileChange is one file of a plan.
type FileChange struct {
	// Path is relative to the repository root.
	Path string
	// Content is the new content; nil deletes the file.
	Content []byte
}

// Plan is a verified change that makes the target render as at the good
// commit and changes no other rendered object.
type Plan struct {
	// UpToDate is set when the head already renders the target as at the
	// good commit: there is nothing to commit.
	UpToDate bool
	// Strategy says how the files were changed.
	Strategy Strategy
	// Files are the changes, sorted by path.
	Files []FileChange
	// RevertedCommits are the commits a Revert plan undoes, newest first.
	RevertedCommits []string
	// Notes explain the choice of strategy, for commit messages.
	Notes []string
}

// Paths returns the paths of the changed files.
func (p *Plan) Paths() []string {
	out := make([]string, len(p.Files))
	for i, f := range p.Files {
		out[i] = f.Path
	}
	return out
}

// planner holds the renderings a plan is computed and verified against.
type planner struct {
	in              PlanInput
	dir             string
	good, bad, head snapshot
	// files holds the contents of the changed files the plan works on.
	files map[string]versions
	// blobs holds each content read into files once, by its blob's hash
	// (Git stores identical files once, and so does the plan); blobBytes
	// is their total, bounded by maxTreeBytes.
	blobs            map[plumbing.Hash][]byte
	blobBytes        int64
	goodR, badR, hdR *rendering
	goodObj, badObj  renderedObject
	headKey          objectKey
	// goodData, badData and headData are the target's targetData.
	goodData, badData, headData string
	// helm renders a HelmRelease target's chart; nil when the plan
	// compares its inputs. goodChart and headChart are the renderings at
	// the good commit and the head.
	helm                 *helmRenderer
	goodChart, headChart *chartRendering
	// renderNote says how a HelmRelease target was verified.
	renderNote string
}

// versions are the contents of a file at the good, bad and head commits,
// nil where it does not exist.
type versions struct {
	good, bad, head []byte
}

// PlanRevert computes the smallest change to the head that makes the
// target render as at the good commit and changes nothing else, and
// verifies it by rendering the result. A `git revert` of the commits that
// changed the target is preferred when they touched nothing else; otherwise
// the target's definition is edited. When neither verifies, the error wraps
// ErrUnverifiable and says why. ctx is checked before each render and each
// commit walked: a cancelled plan stops and returns ctx's error.
func PlanRevert(ctx context.Context, in PlanInput) (*Plan, error) {
	plan, err := planRevert(ctx, in)
	if ctxErr := ctx.Err(); ctxErr != nil {
		// Renders and walks fail once ctx is done; that is no finding
		// about the repository.
		return nil, fmt.Errorf("planning the revert: %w", ctxErr)
	}
	return plan, err
}

func planRevert(ctx context.Context, in PlanInput) (*Plan, error) {
	p := &planner{in: in, files: map[string]versions{}}
	if err := p.load(ctx); err != nil {
		return nil, err
	}
	switch {
	case p.goodData == p.badData:
		return nil, fmt.Errorf("%w: %w: commit %s renders %s exactly as the last promoted commit %s",
			ErrUnverifiable, ErrSameRendering, ShortSHA(in.Bad.Hash.String()), in.Target, ShortSHA(in.Good.Hash.String()))
	case p.headData == p.goodData:
		return &Plan{UpToDate: true}, nil
	case p.headData != p.badData:
		return nil, fmt.Errorf("%w: the target changed again after commit %s (the branch head %s renders it differently): not reverting over a newer change",
			ErrUnverifiable, ShortSHA(in.Bad.Hash.String()), ShortSHA(in.Head.Hash.String()))
	}

	changed, err := changedPaths(in.Good, in.Bad)
	if err != nil {
		return nil, err
	}
	defining, err := p.definingFiles(ctx, changed)
	if err != nil {
		return nil, err
	}
	if len(defining) == 0 {
		return nil, fmt.Errorf("%w: none of the files changed between %s and %s defines the target",
			ErrUnverifiable, ShortSHA(in.Good.Hash.String()), ShortSHA(in.Bad.Hash.String()))
	}

	plan, why, err := p.tryRevert(ctx, defining)
	if err != nil {
		return nil, err
	}
	if plan != nil {
		return p.noted(plan), nil
	}
	plan, err = p.tryEdit(ctx, defining)
	if err != nil {
		if errors.Is(err, ErrUnverifiable) && p.renderNote != "" {
			// Compared on its inputs, the target differs wherever the
			// chart does: say why the chart was not rendered.
			return nil, fmt.Errorf("%w (%s)", err, p.renderNote)
		}
		return nil, err
	}
	plan.Notes = append([]string{why}, plan.Notes...)
	return p.noted(plan), nil
}

// noted adds how a HelmRelease target was verified to a plan's notes.
func (p *planner) noted(plan *Plan) *Plan {
	if p.renderNote != "" {
		plan.Notes = append(plan.Notes, p.renderNote)
	}
	return plan
}

// load reads and renders the three commits.
func (p *planner) load(ctx context.Context) error {
	var err error
	if p.dir, err = cleanPath(p.in.Path); err != nil {
		return err
	}
	load := func(c *object.Commit) (snapshot, *rendering, error) {
		files, err := snapshotOf(c, p.in.MaxFileSize)
		if err != nil {
			return snapshot{}, nil, err
		}
		r, err := render(ctx, files, p.dir)
		if err != nil {
			return snapshot{}, nil, fmt.Errorf("at commit %s: %w", ShortSHA(c.Hash.String()), err)
		}
		return files, r, nil
	}
	if p.good, p.goodR, err = load(p.in.Good); err != nil {
		return err
	}
	if p.bad, p.badR, err = load(p.in.Bad); err != nil {
		return err
	}
	if p.in.Head.Hash == p.in.Bad.Hash {
		p.head, p.hdR = p.bad, p.badR
	} else if p.head, p.hdR, err = load(p.in.Head); err != nil {
		return err
	}
	var goodKey, badKey objectKey
	commits := []struct {
		rendering *rendering
		files     snapshot
		commit    *object.Commit
		key       *objectKey
		data      *string
	}{{p.goodR, p.good, p.in.Good, &goodKey, &p.goodData}, {p.badR, p.bad, p.in.Bad, &badKey, &p.badData}, {p.hdR, p.head, p.in.Head, &p.headKey, &p.headData}}
	for _, r := range commits {
		k, err := r.rendering.find(p.in.Target)
		if err != nil {
			return fmt.Errorf("%s at commit %s: %w", p.in.Target, ShortSHA(r.commit.Hash.String()), err)
		}
		*r.key = k
	}
	if err := p.loadCharts(ctx, goodKey, badKey); err != nil {
		return err
	}
	for _, r := range commits {
		var err error
		if *r.data, err = p.targetData(ctx, r.rendering, *r.key, r.files); err != nil {
			return fmt.Errorf("at commit %s: %w", ShortSHA(r.commit.Hash.String()), err)
		}
	}
	p.goodObj, p.badObj = p.goodR.objects[goodKey], p.badR.objects[badKey]
	return nil
}

// definingFiles returns the changed files that define the target: those
// whose change, undone alone, changes the target's rendering at the bad
// commit (a file that breaks the build when undone alone counts too). It
// reads their contents into p.files.
func (p *planner) definingFiles(ctx context.Context, changed []string) ([]string, error) {
	if len(changed) > maxInfluenceRenders {
		out := p.annotatedFiles(changed)
		return out, p.readFiles(out)
	}
	if err := p.readFiles(changed); err != nil {
		return nil, err
	}
	var out []string
	for _, f := range changed {
		files := p.bad.with(map[string][]byte{f: p.files[f].good})
		r, err := render(ctx, files, p.dir)
		if err != nil {
			out = append(out, f)
			continue
		}
		k, err := r.find(p.in.Target)
		if err != nil {
			out = append(out, f)
			continue
		}
		if data, err := p.targetData(ctx, r, k, files); err != nil || data != p.badData {
			out = append(out, f)
		}
	}
	return out, nil
}

// readFiles reads the good, bad and head contents of files into p.files:
// each distinct content once, all of them together within maxTreeBytes,
// each size known from its blob's header before a byte is read.
func (p *planner) readFiles(files []string) error {
	for _, f := range files {
		var v versions
		var err error
		if v.good, err = p.readFile(p.good, f); err != nil {
			return err
		}
		if v.bad, err = p.readFile(p.bad, f); err != nil {
			return err
		}
		if v.head, err = p.readFile(p.head, f); err != nil {
			return err
		}
		p.files[f] = v
	}
	return nil
}

// readFile returns the content of f in s (nil when there is none), read
// once per distinct blob of the plan.
func (p *planner) readFile(s snapshot, f string) ([]byte, error) {
	b, e, changed := s.lookup(f)
	if changed || e == nil {
		return b, nil
	}
	if b, ok := p.blobs[e.Hash]; ok {
		return b, nil
	}
	size, err := s.tree.Size(f)
	if err != nil {
		return nil, fmt.Errorf("failed to read %s: %w", f, err)
	}
	if size > s.fileBound() {
		return nil, s.tooLarge(f, size)
	}
	if p.blobBytes+size > maxTreeBytes {
		return nil, fmt.Errorf("%w: the files the bad commit changed take more than %d MiB to compare (%s among them): revert the commit by hand",
			ErrUnverifiable, maxTreeBytes>>20, f)
	}
	b, err = s.readEntry(s.tree, f, e)
	if err != nil {
		return nil, err
	}
	if p.blobs == nil {
		p.blobs = map[plumbing.Hash][]byte{}
	}
	p.blobs[e.Hash] = b
	p.blobBytes += int64(len(b))
	return b, nil
}

// annotatedFiles approximates definingFiles for large changes: the
// target's origin files, the changed kustomization files and, for a
// HelmRelease whose chart is a directory of the repository, the changed
// files of that directory.
func (p *planner) annotatedFiles(changed []string) []string {
	charts := []string{p.gitChartDir(p.goodObj), p.gitChartDir(p.badObj)}
	var out []string
	for _, f := range changed {
		if f == p.goodObj.origin || f == p.badObj.origin || isKustomizationPath(f) || underAny(f, charts) {
			out = append(out, f)
		}
	}
	return out
}

// gitChartDir is the repository directory of the chart of a HelmRelease
// target whose chart comes from a GitRepository ("." for the whole
// repository), "" for anything else.
func (p *planner) gitChartDir(obj renderedObject) string {
	var hr helmReleaseSpec
	if p.in.Target.Kind != "HelmRelease" || obj.data == "" || json.Unmarshal([]byte(obj.data), &hr) != nil ||
		hr.Spec.Chart.Spec.SourceRef.Kind != "GitRepository" {
		return ""
	}
	dir, err := cleanPath(hr.Spec.Chart.Spec.Chart)
	switch {
	case err != nil:
		return ""
	case dir == "":
		return "."
	}
	return dir
}

// underAny reports whether the repository path f is in one of dirs ("" is
// none; "." is the whole repository).
func underAny(f string, dirs []string) bool {
	for _, d := range dirs {
		switch {
		case d == "":
		case d == ".":
			return true
		case strings.HasPrefix(f, d+"/"):
			return true
		}
	}
	return false
}

// tryRevert plans the revert of the commits between good and head that
// touched the defining files, when each of them touched nothing else and
// none came after the bad commit. It returns nil and why not otherwise.
func (p *planner) tryRevert(ctx context.Context, defining []string) (*Plan, string, error) {
	good, bad, head := p.in.Good, p.in.Bad, p.in.Head
	goodAncestors, err := ancestors(ctx, good)
	if err != nil {
		return nil, "", err
	}
	inBad, err := commitsSince(ctx, bad, goodAncestors)
	if err != nil {
		return nil, "", fmt.Errorf("failed to walk the history from %s: %w", ShortSHA(bad.Hash.String()), err)
	}
	if !inBad.haveParent(good.Hash) {
		return nil, fmt.Sprintf("Not a revert: %s is not a descendant of %s.", ShortSHA(bad.Hash.String()), ShortSHA(good.Hash.String())), nil
	}
	inHead, err := commitsSince(ctx, head, goodAncestors)
	if err != nil {
		return nil, "", err
	}
	isDefining := map[string]bool{}
	for _, f := range defining {
		isDefining[f] = true
	}
	var reverted []string
	for _, c := range inHead {
		if err := ctx.Err(); err != nil {
			return nil, "", err
		}
		// Most commits of a busy repository touch none of the defining
		// files: looking them up is cheaper than listing what changed.
		if touches, err := changesAny(c, defining); err != nil {
			return nil, "", err
		} else if !touches {
			continue
		}
		files, err := commitPaths(c)
		if err != nil {
			return nil, "", err
		}
		var others []string
		for _, f := range files {
			if !isDefining[f] {
				others = append(others, f)
			}
		}
		if !inBad.has(c.Hash) {
			return nil, fmt.Sprintf("Not a revert: commit %s, after %s, also changed %s.", ShortSHA(c.Hash.String()), ShortSHA(bad.Hash.String()), strings.Join(defining, ", ")), nil
		}
		if len(others) > 0 {
			return nil, fmt.Sprintf("Not a revert: commit %s also changed %s.", ShortSHA(c.Hash.String()), strings.Join(others, ", ")), nil
		}
		reverted = append(reverted, c.Hash.String())
	}
	changes := map[string][]byte{}
	for _, f := range defining {
		changes[f] = p.files[f].good
	}
	if err := p.verify(ctx, changes); err != nil {
		return nil, fmt.Sprintf("Not a revert: %v.", err), nil
	}
	return &Plan{Strategy: StrategyRevert, Files: fileChanges(changes), RevertedCommits: reverted}, "", nil
}

// tryEdit plans a surgical edit of the defining files: of what the bad
// commit changed in each (the target's documents, each field or named
// entry of a kustomization), it undoes the parts that change the target's
// rendering, and leaves the rest of the file as the head has it. A defining
// file without such parts is restored as a whole. The result must verify.
func (p *planner) tryEdit(ctx context.Context, defining []string) (*Plan, error) {
	changes := map[string][]byte{}
	var notes []string
	for _, f := range defining {
		v := p.files[f]
		all := fileEdits(f, v.good, v.bad, p.in.Target)
		var kept []edit
		for _, e := range all {
			out, ok, err := applyEdits(v.head, []edit{e})
			if err != nil || !ok {
				continue
			}
			if p.changesTarget(ctx, map[string][]byte{f: out}) {
				kept = append(kept, e)
			}
		}
		if len(kept) == 0 {
			kept = all
		}
		out, ok, err := applyEdits(v.head, kept)
		if err != nil {
			return nil, fmt.Errorf("editing %s: %w", f, err)
		}
		if !ok {
			changes[f] = v.good
			notes = append(notes, fmt.Sprintf("%s restored as it was at %s.", f, ShortSHA(p.in.Good.Hash.String())))
			continue
		}
		changes[f] = out
		for _, e := range kept {
			notes = append(notes, fmt.Sprintf("%s: %s restored.", f, e.what))
		}
	}
	if err := p.verify(ctx, changes); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnverifiable, err)
	}
	return &Plan{Strategy: StrategyEdit, Files: fileChanges(changes), Notes: notes}, nil
}

// changesTarget reports whether the head with the changes renders the
// target differently from the head (or does not build).
func (p *planner) changesTarget(ctx context.Context, changes map[string][]byte) bool {
	files := p.head.with(changes)
	r, err := render(ctx, files, p.dir)
	if err != nil {
		return false
	}
	k, err := r.find(p.in.Target)
	if err != nil {
		return true
	}
	data, err := p.targetData(ctx, r, k, files)
	return err != nil || data != p.headData
}

// verify renders the head with the changes and checks that the target is
// back to its good rendering and that no other object changed.
func (p *planner) verify(ctx context.Context, changes map[string][]byte) error {
	files := p.head.with(changes)
	r, err := render(ctx, files, p.dir)
	if err != nil {
		return fmt.Errorf("the result does not build: %w", err)
	}
	k, err := r.find(p.in.Target)
	if err != nil {
		return fmt.Errorf("the result does not render %s: %w", p.in.Target, err)
	}
	got, err := p.targetData(ctx, r, k, files)
	if err != nil {
		return err
	}
	if got != p.goodData {
		what := "the target"
		if p.helm != nil {
			what = fmt.Sprintf("%s, rendered by the chart of %s,", *p.in.Rendered, p.in.Target)
		}
		return fmt.Errorf("%s would still differ from its last promoted rendering at %s", what, strings.Join(jsonDiff(got, p.goodData, 3), ", "))
	}
	inputs, err := p.verifyHelmRelease(r, k, files)
	if err != nil {
		return err
	}
	if err := p.verifyChart(ctx, r, k, files); err != nil {
		return err
	}
	var others []string
	for key, obj := range r.objects {
		if key == k || inputs[key] {
			continue
		}
		if h, ok := p.hdR.objects[key]; !ok || h.data != obj.data {
			others = append(others, key.String())
		}
	}
	for key := range p.hdR.objects {
		if _, ok := r.objects[key]; !ok && key != p.headKey && !inputs[key] {
			others = append(others, key.String())
		}
	}
	if len(others) > 0 {
		sort.Strings(others)
		return fmt.Errorf("undoing the change of %s would also change %s", p.in.Target, strings.Join(others, ", "))
	}
	return nil
}

// fileChanges sorts a change set by path.
func fileChanges(m map[string][]byte) []FileChange {
	out := make([]FileChange, 0, len(m))
	for p, b := range m {
		out = append(out, FileChange{Path: p, Content: b})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// maxPreviousDefinition bounds the first-parent walk of PreviousDefinition.
const maxPreviousDefinition = 200

// PreviousDefinition returns the last commit before bad, following first
// parents, that renders the target differently from bad: the target's
// previous definition, used as the good commit when none was promoted.
func PreviousDefinition(ctx context.Context, bad *object.Commit, path string, t Target, maxFile int64) (*object.Commit, error) {
	dir, err := cleanPath(path)
	if err != nil {
		return nil, err
	}
	target := func(c *object.Commit) (string, error) {
		files, err := snapshotOf(c, maxFile)
		if err != nil {
			return "", err
		}
		r, err := render(ctx, files, dir)
		if err != nil {
			return "", err
		}
		k, err := r.find(t)
		if err != nil {
			return "", err
		}
		return targetData(t, r, k, files)
	}
	badData, err := target(bad)
	if err != nil {
		return nil, fmt.Errorf("%s at commit %s: %w", t, ShortSHA(bad.Hash.String()), err)
	}
	c := bad
	for range maxPreviousDefinition {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if c.NumParents() == 0 {
			break
		}
		parent, err := firstParent(c)
		if err != nil {
			return nil, fmt.Errorf("failed to walk back from %s: %w", ShortSHA(bad.Hash.String()), err)
		}
		c = parent
		if data, err := target(c); err == nil && data != badData {
			return c, nil
		}
	}
	return nil, fmt.Errorf("%w: no promoted revision is recorded and no earlier commit renders %s differently from %s",
		ErrUnverifiable, t, ShortSHA(bad.Hash.String()))
}
