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

package rollout

import (
	"cmp"
	"errors"
	"fmt"
	"strings"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// The rules of a wave that can work, beyond what the Canary CRD's CEL
// rules see at admission: the API server cannot compare a stage's Canary
// with this Canary's namespace, nor know the agent's --cluster-name, and a
// Canary stored before a rule existed was never held to it. A wave that
// breaks them starts no rollout and stalls (InvalidPromotionReason).

// InvalidPromotion says why a stage of c's spec.gitops.promote can never
// work, naming the field; "" when every stage can. cluster is the
// agent's --cluster-name.
func InvalidPromotion(c *v1alpha1.Canary, cluster string) string {
	for i, stage := range c.Spec.GitOps.GetPromote() {
		field := fmt.Sprintf("spec.gitops.promote[%d]", i)
		if promotesToItself(c, stage, cluster) {
			return fmt.Sprintf("%s.canary: the next stage's Canary is this Canary itself (%s/%s, in this agent's cluster): "+
				"its verdict would be this Canary's own; name the next stage's Canary in canary.name and canary.namespace, "+
				"and its agent's --cluster-name in canary.cluster when it runs in another cluster", field, c.Namespace, c.Name)
		}
		if err := checkStagePath(stage.Path); err != nil {
			return fmt.Sprintf("%s.path %q: %v", field, stage.Path, err)
		}
		if stage.Branch != "" {
			if err := CheckBranchName(stage.Branch); err != nil {
				return fmt.Sprintf("%s.branch %q is not a Git branch name: %v", field, stage.Branch, err)
			}
		}
		if stage.Soak != nil && stage.Soak.Duration > 0 && !hasThresholdRange(c) {
			return fmt.Sprintf("%s.soak: the soak holds the promoted primary to the thresholdRange of spec.analysis.metrics, and no metric has one, "+
				"so it could fail only on missing data (a judge block compares a canary with the primary, and a soak has none): "+
				"add a thresholdRange to a metric, the soak's floor, or remove soak", field)
		}
	}
	return ""
}

// promotesToItself tells whether stage's Canary is c: the same namespace
// and name, read under the same commit status context (the stage's
// canary.cluster is this agent's --cluster-name, both maybe empty), on a
// commit of c's own repository and branch (a stage of another repository
// or branch gets commits c never reads). A stage's Canary defaults to c's
// name and namespace.
func promotesToItself(c *v1alpha1.Canary, stage v1alpha1.PromotionTarget, cluster string) bool {
	if stage.SourceRef != nil || stage.Branch != "" {
		return false
	}
	name, namespace, stageCluster := c.Name, c.Namespace, ""
	if r := stage.Canary; r != nil {
		name, namespace, stageCluster = r.Name, cmp.Or(r.Namespace, c.Namespace), r.Cluster
	}
	return name == c.Name && namespace == c.Namespace && stageCluster == cluster
}

// checkStagePath refuses a path a promotion must never write under: one
// outside the repository, absolute, or in Git's own directory.
func checkStagePath(path string) error {
	if strings.HasPrefix(path, "/") {
		return errors.New("the path is relative to the repository's root: no leading '/'")
	}
	for _, segment := range strings.Split(path, "/") {
		switch {
		case segment == "..":
			return errors.New("the path must stay inside the repository: no '..' segment")
		case strings.EqualFold(segment, ".git"):
			return errors.New("the path must not name a '.git' segment: Git's own directory is never a stage")
		}
	}
	return nil
}

// CheckBranchName says why name is not a branch name Git accepts, by the
// rules of git check-ref-format --branch; nil when it is one.
func CheckBranchName(name string) error {
	for _, r := range name {
		if r <= ' ' || r == 0x7f || strings.ContainsRune("~^:?*[\\", r) {
			return fmt.Errorf("%q: no space, control character or any of ~ ^ : ? * [ \\", r)
		}
	}
	for _, bad := range []string{"..", "@{", "//"} {
		if strings.Contains(name, bad) {
			return fmt.Errorf("no %q", bad)
		}
	}
	switch {
	case name == "" || name == "@":
		return errors.New("not empty, not '@'")
	case strings.HasPrefix(name, "-") || strings.HasPrefix(name, "/"):
		return errors.New("not starting with '-' or '/'")
	case strings.HasSuffix(name, "/") || strings.HasSuffix(name, "."):
		return errors.New("not ending with '/' or '.'")
	}
	for _, component := range strings.Split(name, "/") {
		if strings.HasPrefix(component, ".") || strings.HasSuffix(component, ".lock") {
			return fmt.Errorf("component %q: none may start with '.' or end with '.lock'", component)
		}
	}
	return nil
}

// hasThresholdRange tells whether a metric of c's analysis has a
// thresholdRange: a check that can fail on the primary's value.
func hasThresholdRange(c *v1alpha1.Canary) bool {
	if c.Spec.Analysis == nil {
		return false
	}
	for _, m := range c.Spec.Analysis.Metrics {
		if m.ThresholdRange != nil {
			return true
		}
	}
	return false
}
