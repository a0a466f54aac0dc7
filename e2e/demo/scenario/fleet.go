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

package scenario

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-billy/v5/util"
	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage/memory"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/internal/testing/testbed"
)

// Names of the Flux objects the demo creates in each stage's namespace.
const (
	gitRepositoryName = "fleet"
	kustomizationName = "apps"
	fleetSecretName   = "fleet-auth"
)

// fleet is the Gitea repository Flux applies the app from, and a clone in
// memory where the demo plays the developer who commits releases.
type fleet struct {
	screen *Screen
	gitea  *testbed.Gitea
	kube   client.Client
	name   string
	repo   *gogit.Repository
}

// newFleet creates the repository in Gitea and an empty clone of it.
func newFleet(ctx context.Context, s *settings) (*fleet, error) {
	f := &fleet{screen: s.screen, gitea: s.env.Gitea, kube: s.kube, name: s.repository}
	if err := f.gitea.CreateRepository(ctx, f.name); err != nil {
		return nil, err
	}
	repo, err := gogit.InitWithOptions(memory.NewStorage(), memfs.New(), gogit.InitOptions{DefaultBranch: "refs/heads/main"})
	if err != nil {
		return nil, err
	}
	if _, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{f.url()}}); err != nil {
		return nil, err
	}
	f.repo = repo
	return f, nil
}

func (f *fleet) url() string { return f.gitea.RepositoryURL(f.name) }

func (f *fleet) auth() *http.BasicAuth {
	return &http.BasicAuth{Username: f.gitea.User, Password: f.gitea.Token}
}

// commit writes files on top of the previous commit, commits them as a
// developer and pushes main. It returns the commit hash.
func (f *fleet) commit(ctx context.Context, files map[string]string, message string) (string, error) {
	wt, err := f.repo.Worktree()
	if err != nil {
		return "", err
	}
	for p, c := range files {
		if err := util.WriteFile(wt.Filesystem, p, []byte(c), 0o644); err != nil {
			return "", err
		}
	}
	if err := wt.AddWithOptions(&gogit.AddOptions{All: true}); err != nil {
		return "", err
	}
	sig := &object.Signature{Name: "Dev", Email: "dev@demo.serin.dev", When: time.Now()}
	hash, err := wt.Commit(message, &gogit.CommitOptions{Author: sig, Committer: sig})
	if err != nil {
		return "", err
	}
	err = f.repo.PushContext(ctx, &gogit.PushOptions{Auth: f.auth(), RefSpecs: []config.RefSpec{"refs/heads/main:refs/heads/main"}})
	if err != nil {
		return "", fmt.Errorf("git push: %w", err)
	}
	return hash.String(), nil
}

// pull fast-forwards the clone to main in Gitea (after a merged pull
// request) and returns main's commit.
func (f *fleet) pull(ctx context.Context) (string, error) {
	wt, err := f.repo.Worktree()
	if err != nil {
		return "", err
	}
	err = wt.PullContext(ctx, &gogit.PullOptions{RemoteName: "origin", ReferenceName: "refs/heads/main", SingleBranch: true, Auth: f.auth()})
	if err != nil && err != gogit.NoErrAlreadyUpToDate {
		return "", fmt.Errorf("git pull: %w", err)
	}
	head, err := f.repo.Head()
	if err != nil {
		return "", err
	}
	return head.Hash().String(), nil
}

// applyFluxObjects creates, in namespace ns, the Git credentials, the
// GitRepository and the Kustomization that applies path of the repository:
// a stage of its own, as a cluster has.
func (f *fleet) applyFluxObjects(ctx context.Context, ns, path string) error {
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: fleetSecretName, Namespace: ns},
		StringData: map[string]string{"username": f.gitea.User, "password": f.gitea.Token},
	}
	if err := f.kube.Create(ctx, secret); err != nil {
		return err
	}
	objects := []*unstructured.Unstructured{
		fluxObject("source.toolkit.fluxcd.io/v1", "GitRepository", ns, gitRepositoryName, map[string]any{
			"url": f.url(), "interval": "10m", "timeout": "30s",
			"ref": map[string]any{"branch": "main"}, "secretRef": map[string]any{"name": fleetSecretName},
		}),
		fluxObject("kustomize.toolkit.fluxcd.io/v1", "Kustomization", ns, kustomizationName, map[string]any{
			"interval": "10m", "path": "./" + path, "prune": true, "timeout": "1m",
			"sourceRef": map[string]any{"kind": "GitRepository", "name": gitRepositoryName},
		}),
	}
	for _, o := range objects {
		if err := f.kube.Create(ctx, o); err != nil {
			return fmt.Errorf("create %s %s/%s: %w", o.GetKind(), ns, o.GetName(), err)
		}
	}
	return nil
}

func fluxObject(apiVersion, kind, ns, name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     spec,
	}}
}

// sync asks the source-controller to fetch now for namespace ns's
// GitRepository (as `flux reconcile source git` does) and waits until its
// Kustomization applied commit.
func (f *fleet) sync(ctx context.Context, ns, commit string) error {
	repo := &unstructured.Unstructured{}
	repo.SetAPIVersion("source.toolkit.fluxcd.io/v1")
	repo.SetKind("GitRepository")
	if err := f.kube.Get(ctx, types.NamespacedName{Namespace: ns, Name: gitRepositoryName}, repo); err != nil {
		return err
	}
	patch := client.MergeFrom(repo.DeepCopy())
	ann := repo.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann["reconcile.fluxcd.io/requestedAt"] = time.Now().Format(time.RFC3339Nano)
	repo.SetAnnotations(ann)
	if err := f.kube.Patch(ctx, repo, patch); err != nil {
		return err
	}
	want := "main@sha1:" + commit
	return poll(ctx, f.screen, time.Minute, func() (bool, error) {
		ks := &unstructured.Unstructured{}
		ks.SetAPIVersion("kustomize.toolkit.fluxcd.io/v1")
		ks.SetKind("Kustomization")
		if err := f.kube.Get(ctx, types.NamespacedName{Namespace: ns, Name: kustomizationName}, ks); err != nil {
			return false, nil
		}
		rev, _, _ := unstructured.NestedString(ks.Object, "status", "lastAppliedRevision")
		return rev == want, nil
	}, func() string { return "Flux has not applied " + want + " in namespace " + ns })
}

// pullRequest is the part of a Gitea pull request the demo shows.
type pullRequest struct {
	Number  int    `json:"number"`
	Title   string `json:"title"`
	Body    string `json:"body"`
	HTMLURL string `json:"html_url"`
	Merged  bool   `json:"merged"`
	Head    struct {
		Ref string `json:"ref"`
	} `json:"head"`
}

// pullRequests lists the repository's pull requests, open or not.
func (f *fleet) pullRequests(ctx context.Context) ([]pullRequest, error) {
	var prs []pullRequest
	err := f.gitea.API(ctx, "GET", fmt.Sprintf("/repos/%s/%s/pulls?state=all", f.gitea.User, f.name), nil, &prs)
	return prs, err
}

// pullRequestDiff returns the changed lines of a pull request's diff.
func (f *fleet) pullRequestDiff(ctx context.Context, number int) ([]string, error) {
	diff, err := f.gitea.Raw(ctx, fmt.Sprintf("/repos/%s/%s/pulls/%d.diff", f.gitea.User, f.name, number))
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, l := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(l, "+++ b/"):
			lines = append(lines, strings.TrimPrefix(l, "+++ b/")+":")
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
		case strings.HasPrefix(l, "+"), strings.HasPrefix(l, "-"):
			lines = append(lines, "  "+l)
		}
	}
	return lines, nil
}

// merge merges a pull request as a person would in Gitea's UI.
func (f *fleet) merge(ctx context.Context, number int) error {
	return f.gitea.API(ctx, "POST", fmt.Sprintf("/repos/%s/%s/pulls/%d/merge", f.gitea.User, f.name, number),
		map[string]any{"Do": "merge"}, nil)
}

// commitStatus is the part of a Gitea commit status the demo shows.
type commitStatus struct {
	Context     string `json:"context"`
	Status      string `json:"status"`
	Description string `json:"description"`
}

// commitStatuses lists the statuses of a commit, as Gitea has them.
func (f *fleet) commitStatuses(ctx context.Context, sha string) ([]commitStatus, error) {
	var statuses []commitStatus
	err := f.gitea.API(ctx, "GET", fmt.Sprintf("/repos/%s/%s/commits/%s/statuses", f.gitea.User, f.name, sha), nil, &statuses)
	return statuses, err
}

// changedFiles lists the files of a commit's map that are in dir, sorted,
// for the screen.
func changedFiles(files map[string]string, dir string) string {
	var names []string
	for p := range files {
		if name, ok := strings.CutPrefix(p, dir+"/"); ok {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
