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
	"bytes"
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testutil"
	"github.com/serin-dev/serin/internal/version"
)

// testNow is the clock of every test.
var testNow = time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)

// testVersion is the CLI's version in every test.
var testVersion = version.Info{
	Version: "v0.3.0", GitCommit: "0123456789abcdef0123456789abcdef01234567", GitTreeState: "clean",
	GoVersion: "go1.26.8", Platform: "linux/amd64",
}

// assertGolden compares got with the file at path (under testdata);
// UPDATE_GOLDEN=true rewrites it.
func assertGolden(t *testing.T, path, got string) {
	t.Helper()
	testutil.Golden(t, filepath.Join("testdata", path), got)
}

// newFakeClient is a fake client holding objects, with the indexes that
// stand in for the field selectors the commands use.
func newFakeClient(objects ...client.Object) client.WithWatch {
	return fake.NewClientBuilder().
		WithScheme(newScheme()).
		WithObjects(objects...).
		WithStatusSubresource(&v1alpha1.Canary{}, &v1alpha1.CanaryGroup{}).
		WithIndex(&v1alpha1.Canary{}, "metadata.name", func(o client.Object) []string {
			return []string{o.GetName()}
		}).
		WithIndex(&v1alpha1.CanaryGroup{}, "metadata.name", func(o client.Object) []string {
			return []string{o.GetName()}
		}).
		WithIndex(&corev1.Event{}, "involvedObject.kind", func(o client.Object) []string {
			return []string{o.(*corev1.Event).InvolvedObject.Kind}
		}).
		WithIndex(&corev1.Event{}, "involvedObject.name", func(o client.Object) []string {
			return []string{o.(*corev1.Event).InvolvedObject.Name}
		}).
		Build()
}

// newTestEnvironment runs commands against kube, at testNow, with the
// kubeconfig of testdata (whose context namespace is apps).
func newTestEnvironment(t *testing.T, kube client.WithWatch) *environment {
	t.Setenv("KUBECONFIG", filepath.Join("testdata", "kubeconfig"))
	return &environment{
		kubeconfig:   genericclioptions.NewConfigFlags(false),
		newClient:    func() (client.WithWatch, error) { return kube, nil },
		now:          func() time.Time { return testNow },
		pollInterval: 10 * time.Millisecond,
		version:      func() version.Info { return testVersion },
	}
}

// assertRun checks what a command returned and printed on standard error,
// and its standard output against the golden file dir/golden, if any.
func assertRun(t *testing.T, run commandRun, wantErr, wantStderr, dir, golden string) {
	t.Helper()
	if diff := cmp.Diff(wantErr, errorText(run.err)); diff != "" {
		t.Fatalf("error differs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantStderr, run.stderr); diff != "" {
		t.Errorf("standard error differs (-want +got):\n%s", diff)
	}
	if golden != "" {
		assertGolden(t, dir+"/"+golden, run.stdout)
	}
}

// commandRun is what a command printed and returned.
type commandRun struct {
	stdout, stderr string
	err            error
}

func runCommand(ctx context.Context, env *environment, args ...string) commandRun {
	var stdout, stderr syncBuffer
	return runCommandInto(ctx, env, &stdout, &stderr, args...)
}

func runCommandInto(ctx context.Context, env *environment, stdout, stderr *syncBuffer, args ...string) commandRun {
	root := newRootCommand(env)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetIn(bytes.NewReader(nil))
	err := root.ExecuteContext(ctx)
	return commandRun{stdout: stdout.String(), stderr: stderr.String(), err: err}
}

// syncBuffer is a bytes.Buffer that a command and a test can share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// canaryBuilder builds Canaries for tests.
type canaryBuilder struct{ canary v1alpha1.Canary }

// makeCanary returns a Canary of the Deployment of the same name, routed
// with Gateway API, that the agent initialized.
func makeCanary(namespace, name string) *canaryBuilder {
	return &canaryBuilder{v1alpha1.Canary{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: v1alpha1.CanaryKind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Generation: 1,
			UID: types.UID("uid-" + namespace + "-" + name)},
		Spec: v1alpha1.CanarySpec{
			TargetRef: v1alpha1.TargetReference{APIVersion: "apps/v1", Kind: "Deployment", Name: name},
			Service:   v1alpha1.CanaryService{Port: 9898},
			Routing: v1alpha1.CanaryRouting{
				Provider:    v1alpha1.GatewayAPIRouting,
				GatewayRefs: []v1alpha1.GatewayReference{{Name: "public", Namespace: "gateways"}},
			},
		},
	}}
}

func (b *canaryBuilder) revisions(attempted, promoted string) *canaryBuilder {
	b.canary.Status.LastAttemptedRevision = attempted
	b.canary.Status.LastPromotedRevision = promoted
	return b
}

func (b *canaryBuilder) phase(phase v1alpha1.CanaryPhase, weight int) *canaryBuilder {
	b.canary.Status.Phase = phase
	b.canary.Status.CanaryWeight = weight
	return b
}

func (b *canaryBuilder) condition(conditionType string, status metav1.ConditionStatus, reason, message string) *canaryBuilder {
	b.canary.Status.Conditions = append(b.canary.Status.Conditions, metav1.Condition{
		Type: conditionType, Status: status, Reason: reason, Message: message,
		LastTransitionTime: metav1.NewTime(testNow.Add(-90 * time.Second)),
	})
	return b
}

func (b *canaryBuilder) ready(status metav1.ConditionStatus, reason, message string) *canaryBuilder {
	return b.condition("Ready", status, reason, message)
}

func (b *canaryBuilder) suspended() *canaryBuilder {
	b.canary.Spec.Suspend = true
	return b
}

func (b *canaryBuilder) label(key, value string) *canaryBuilder {
	if b.canary.Labels == nil {
		b.canary.Labels = map[string]string{}
	}
	b.canary.Labels[key] = value
	return b
}

func (b *canaryBuilder) analysis(analysis v1alpha1.CanaryAnalysis) *canaryBuilder {
	b.canary.Spec.Analysis = &analysis
	return b
}

func (b *canaryBuilder) blueGreen(iterations, done int) *canaryBuilder {
	b.canary.Spec.Routing = v1alpha1.CanaryRouting{Provider: v1alpha1.KubernetesRouting}
	if b.canary.Spec.Analysis == nil {
		b.canary.Spec.Analysis = &v1alpha1.CanaryAnalysis{}
	}
	b.canary.Spec.Analysis.Iterations = iterations
	b.canary.Status.Iterations = done
	return b
}

func (b *canaryBuilder) generation(generation, observed int64) *canaryBuilder {
	b.canary.Generation = generation
	b.canary.Status.ObservedGeneration = observed
	return b
}

// inGroup makes the Canary a member of group's release, with steps passed.
func (b *canaryBuilder) inGroup(group, release string, steps int) *canaryBuilder {
	b.canary.Status.Group = &v1alpha1.GroupStatus{Name: group, Release: release, StepsPassed: steps}
	return b
}

// stages sets the next stages of the wave (spec.gitops.promote), by name.
func (b *canaryBuilder) stages(names ...string) *canaryBuilder {
	if b.canary.Spec.GitOps == nil {
		b.canary.Spec.GitOps = &v1alpha1.GitOpsSpec{}
	}
	b.canary.Spec.GitOps.Promote = nil
	for _, name := range names {
		b.canary.Spec.GitOps.Promote = append(b.canary.Spec.GitOps.Promote,
			v1alpha1.PromotionTarget{Stage: name, Path: "clusters/" + name + "/apps"})
	}
	return b
}

// promotion records where the promoted revision stands in a stage
// (status.promotions), its phase entered ago.
func (b *canaryBuilder) promotion(p v1alpha1.PromotionStatus, ago time.Duration) *canaryBuilder {
	p.LastTransitionTime = ptrTime(testNow.Add(-ago))
	b.canary.Status.Promotions = append(b.canary.Status.Promotions, p)
	return b
}

func (b *canaryBuilder) obj() *v1alpha1.Canary { return b.canary.DeepCopy() }

// groupBuilder builds CanaryGroups for tests.
type groupBuilder struct{ group v1alpha1.CanaryGroup }

// makeGroup returns a CanaryGroup of members that the agent has not
// reconciled yet.
func makeGroup(namespace, name string, members ...string) *groupBuilder {
	b := &groupBuilder{v1alpha1.CanaryGroup{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: v1alpha1.CanaryGroupKind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Generation: 1,
			UID: types.UID("uid-group-" + namespace + "-" + name)},
	}}
	for _, m := range members {
		b.group.Spec.Members = append(b.group.Spec.Members, v1alpha1.GroupMember{Name: m})
	}
	return b
}

// dependsOn makes member wait for others.
func (b *groupBuilder) dependsOn(member string, others ...string) *groupBuilder {
	for i := range b.group.Spec.Members {
		if b.group.Spec.Members[i].Name == member {
			b.group.Spec.Members[i].DependsOn = others
		}
	}
	return b
}

// release sets the current release, started ago, and the group's phase.
func (b *groupBuilder) release(revision string, phase v1alpha1.CanaryPhase, ago time.Duration, members ...v1alpha1.GroupReleaseMember) *groupBuilder {
	b.group.Status.Phase = phase
	b.group.Status.Release = &v1alpha1.GroupRelease{Revision: revision, Phase: phase,
		StartedAt: ptrTime(testNow.Add(-ago)), Members: members}
	return b
}

// verdict finishes the current release, ago.
func (b *groupBuilder) verdict(ago time.Duration, decidedBy, message, revertURL string) *groupBuilder {
	r := b.group.Status.Release
	r.FinishedAt, r.DecidedBy, r.Message, r.RevertURL = ptrTime(testNow.Add(-ago)), decidedBy, message, revertURL
	return b
}

// stage adds a promotion of the current release to a next stage.
func (b *groupBuilder) stage(st v1alpha1.GroupReleaseStage) *groupBuilder {
	r := b.group.Status.Release
	r.Stages = append(r.Stages, st)
	return b
}

// history adds an earlier release.
func (b *groupBuilder) history(r v1alpha1.GroupRelease) *groupBuilder {
	b.group.Status.History = append(b.group.Status.History, r)
	return b
}

func (b *groupBuilder) phase(phase v1alpha1.CanaryPhase) *groupBuilder {
	b.group.Status.Phase = phase
	return b
}

func (b *groupBuilder) condition(conditionType string, status metav1.ConditionStatus, reason, message string) *groupBuilder {
	b.group.Status.Conditions = append(b.group.Status.Conditions, metav1.Condition{
		Type: conditionType, Status: status, Reason: reason, Message: message,
		LastTransitionTime: metav1.NewTime(testNow.Add(-90 * time.Second)),
	})
	return b
}

func (b *groupBuilder) ready(status metav1.ConditionStatus, reason, message string) *groupBuilder {
	return b.condition("Ready", status, reason, message)
}

// stalled makes the group Stalled (and not Ready) for reason.
func (b *groupBuilder) stalled(reason, message string) *groupBuilder {
	return b.ready(metav1.ConditionFalse, reason, message).condition("Stalled", metav1.ConditionTrue, reason, message)
}

func (b *groupBuilder) label(key, value string) *groupBuilder {
	if b.group.Labels == nil {
		b.group.Labels = map[string]string{}
	}
	b.group.Labels[key] = value
	return b
}

func (b *groupBuilder) obj() *v1alpha1.CanaryGroup { return b.group.DeepCopy() }

// releaseMember is a member's line in a release.
func releaseMember(name string, phase v1alpha1.CanaryPhase, weight, steps int, message string) v1alpha1.GroupReleaseMember {
	return v1alpha1.GroupReleaseMember{Name: name, Phase: phase, Weight: weight, StepsPassed: steps, Message: message}
}

func ptrTime(t time.Time) *metav1.Time {
	mt := metav1.NewTime(t)
	return &mt
}
