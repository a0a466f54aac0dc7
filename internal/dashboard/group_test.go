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
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/record"
	"github.com/serin-dev/serin/internal/testing/testobj"
	"github.com/serin-dev/serin/internal/testing/testutil"
)

// releaseStart is when the sample group's current release began, ten
// seconds before podinfo's first step of latestRevision.
var releaseStart = rolloutStart.Add(9*time.Minute + 50*time.Second)

// sampleGroup is the group storefront of podinfo, web and backend: the
// release of latestRevision is under way (podinfo at weight 40, web at
// 20 holding its passed step for podinfo), backend sat it out; the
// release before, of badRevision, failed on podinfo and was reverted.
func sampleGroup() []client.Object {
	at := func(t time.Time) *metav1.Time { mt := metav1.NewTime(t); return &mt }
	g := &v1alpha1.CanaryGroup{
		ObjectMeta: metav1.ObjectMeta{Name: "storefront", Namespace: "apps"},
		Spec: v1alpha1.CanaryGroupSpec{Members: []v1alpha1.GroupMember{
			{Name: "podinfo"}, {Name: "web", DependsOn: []string{"backend"}}, {Name: "backend"}}},
	}
	g.Status = v1alpha1.CanaryGroupStatus{
		Phase: v1alpha1.PhaseProgressing,
		Release: &v1alpha1.GroupRelease{Revision: latestRevision, Phase: v1alpha1.PhaseProgressing, StartedAt: at(releaseStart),
			Members: []v1alpha1.GroupReleaseMember{
				{Name: "podinfo", Phase: v1alpha1.PhaseProgressing, Weight: 40, StepsPassed: 1, Message: "analysing revision " + latestRevision},
				{Name: "web", Phase: v1alpha1.PhaseProgressing, Weight: 20, StepsPassed: 1, Message: "holding step 1 for podinfo"},
			},
			// The release's wave to production, written by podinfo for both.
			Stages: []v1alpha1.GroupReleaseStage{{Stage: "production", Phase: v1alpha1.WaveOpened, WrittenBy: "podinfo", Members: []string{"podinfo", "web"},
				PullRequestURL: "https://git.example/apps/pulls/9", Message: "waiting for the pull request to be merged"}}},
		History: []v1alpha1.GroupRelease{{Revision: badRevision, Phase: v1alpha1.PhaseFailed,
			StartedAt: at(rolloutStart), FinishedAt: at(rolloutStart.Add(time.Minute)),
			DecidedBy: "podinfo", Message: "podinfo failed: error-rate 7.5 above max 1", RevertURL: "https://git.example/apps/pulls/7",
			Members: []v1alpha1.GroupReleaseMember{{Name: "podinfo", Phase: v1alpha1.PhaseFailed, StepsPassed: 1}}}},
		Conditions: []metav1.Condition{{Type: meta.ReadyCondition, Status: metav1.ConditionFalse, Reason: "Progressing",
			Message: "release " + latestRevision + ": 0 of 2 members promoted", LastTransitionTime: *at(releaseStart)}},
	}

	podinfo := sampleCanary()
	podinfo.Status.Group = &v1alpha1.GroupStatus{Name: "storefront", Release: latestRevision, StartedAt: at(releaseStart), StepsPassed: 1}
	web := testobj.MakeCanary("web", "apps").Phase(v1alpha1.PhaseProgressing).Weight(20).Obj()
	// web's rollout of badRevision is an earlier record: not this release's.
	web.Status.LastAppliedSpec = "web-1"
	record.AddStep(&web.Status, step(rolloutStart, 20, v1alpha1.VerdictPassed, "", nil))
	web.Status.LastAppliedSpec = "web-2"
	record.AddStep(&web.Status, step(releaseStart.Add(20*time.Second), 20, v1alpha1.VerdictPassed, "", nil))
	web.Status.Group = &v1alpha1.GroupStatus{Name: "storefront", Release: latestRevision, StartedAt: at(releaseStart),
		StepsPassed: 1, Holding: v1alpha1.HoldingStep}
	backend := testobj.MakeCanary("backend", "apps").Phase(v1alpha1.PhaseSucceeded).Obj()
	return []client.Object{g, podinfo, web, backend}
}

// The groups of the dashboard's namespace, each member's steps on the
// release's time line; a golden file, since it is the pages' input.
func TestGroupsAPI(t *testing.T) {
	objects := append(sampleGroup(), &v1alpha1.CanaryGroup{ObjectMeta: metav1.ObjectMeta{Name: "elsewhere", Namespace: "shop"},
		Spec: v1alpha1.CanaryGroupSpec{Members: []v1alpha1.GroupMember{{Name: "cart"}}}})
	server := startServer(t, newFakeClient(nil, objects...), "apps")

	resp, body := get(t, server, "/api/groups")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %s", resp.Status, body)
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, []byte(body), "", "  "); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, filepath.Join("testdata", "groups.json"), pretty.String())

	// The Canaries' list names their group.
	_, body = get(t, server, "/api/canaries")
	var list struct{ Canaries []summary }
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		t.Fatal(err)
	}
	groups := map[string]string{}
	for _, c := range list.Canaries {
		groups[c.Name] = c.Group
	}
	if diff := cmp.Diff(map[string]string{"backend": "", "podinfo": "storefront", "web": "storefront"}, groups); diff != "" {
		t.Errorf("the Canaries' groups differ (-want +got):\n%s", diff)
	}
}

// groupsForbidden refuses the CanaryGroups, as an API server refuses a
// user whose role grants the Canaries only.
func groupsForbidden() *interceptor.Funcs {
	refuse := func(verb string) error {
		return apierrors.NewForbidden(schema.GroupResource{Group: "serin.dev", Resource: "canarygroups"}, "",
			fmt.Errorf(`User "bob" cannot %s resource "canarygroups" in API group "serin.dev" in the namespace "apps"`, verb))
	}
	return &interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, ok := list.(*v1alpha1.CanaryGroupList); ok {
				return refuse("list")
			}
			return c.List(ctx, list, opts...)
		},
		Watch: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) (watch.Interface, error) {
			if _, ok := list.(*v1alpha1.CanaryGroupList); ok {
				return nil, refuse("watch")
			}
			return c.Watch(ctx, list, opts...)
		},
	}
}

// A user who may see the Canaries but not the CanaryGroups sees the
// Canaries, and why the groups are missing; the page's problem is the
// Canaries' only.
func TestGroupsForbidden(t *testing.T) {
	server := startServer(t, newFakeClient(groupsForbidden(), sampleGroup()...), "apps")

	resp, body := get(t, server, "/api/groups")
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, `cannot list resource \"canarygroups\"`) {
		t.Errorf("GET /api/groups: %s %s", resp.Status, body)
	}
	events := openEvents(t, server, "")
	var got []string
	for len(got) < 2 {
		e := events.next()
		switch e.name {
		case eventSnapshot:
			var snap struct {
				Canaries []summary
				Groups   []groupView
			}
			e.decode(t, &snap)
			got = append(got, fmt.Sprintf("snapshot of %d canaries, %d groups", len(snap.Canaries), len(snap.Groups)))
		case eventGroupProblem:
			var p map[string]string
			e.decode(t, &p)
			got = append(got, "group problem: "+strings.SplitN(p["error"], ".", 2)[0])
		default:
			t.Fatalf("unexpected event %s: %s", e.name, e.data)
		}
	}
	// The two kinds are followed apart: either event may come first.
	sort.Strings(got)
	want := []string{"group problem: Forbidden: your Kubernetes user may not do this", "snapshot of 3 canaries, 0 groups"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events differ (-want +got):\n%s", diff)
	}
}

// The list's stream carries the groups: in the snapshot, again when a
// member takes a step, and their deletion.
func TestGroupEventStream(t *testing.T) {
	ctx := context.Background()
	kube := newFakeClient(nil, sampleGroup()...)
	server := startServer(t, kube, "apps")
	events := openEvents(t, server, "")

	// The groups are listed apart from the Canaries: in the snapshot, or
	// right after it.
	var snap struct{ Groups []groupView }
	events.nextNamed(eventSnapshot).decode(t, &snap)
	if len(snap.Groups) == 0 {
		var first groupView
		events.nextNamed(eventGroup).decode(t, &first)
		snap.Groups = append(snap.Groups, first)
	}
	if len(snap.Groups) != 1 || len(snap.Groups[0].Release.Members) != 2 {
		t.Fatalf("groups %+v, want storefront with two members", snap.Groups)
	}

	web := &v1alpha1.Canary{}
	if err := kube.Get(ctx, client.ObjectKey{Namespace: "apps", Name: "web"}, web); err != nil {
		t.Fatal(err)
	}
	record.AddStep(&web.Status, step(releaseStart.Add(50*time.Second), 40, v1alpha1.VerdictPassed, "", nil))
	if err := kube.Status().Update(ctx, web); err != nil {
		t.Fatal(err)
	}
	var changed groupView
	events.nextNamed(eventGroup).decode(t, &changed)
	steps := changed.Release.Members[1].Steps
	if changed.Name != "storefront" || len(steps) != 2 || steps[1].Weight != 40 {
		t.Errorf("group event after web's step: %s with web's steps %+v", changed.Name, steps)
	}

	if err := kube.Delete(ctx, &v1alpha1.CanaryGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "storefront"}}); err != nil {
		t.Fatal(err)
	}
	var deleted map[string]string
	events.nextNamed(eventGroupDeleted).decode(t, &deleted)
	if deleted["name"] != "storefront" || deleted["namespace"] != "apps" {
		t.Errorf("group-deleted event %v, want apps/storefront", deleted)
	}
}
