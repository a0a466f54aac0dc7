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

package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/gitops"
	"github.com/serin-dev/serin/internal/testing/testbed"
	"github.com/serin-dev/serin/internal/testing/testobj"
)

// A StatefulSet of 4, each pod with a volume of its own, rolled out in
// place by its partition (routing.provider replicas) on the testbed's real
// StatefulSet, PersistentVolume binder and scheduler controllers: the
// test creates the PersistentVolumes the claims bind to (the testbed has
// no provisioner). A revision whose pods are OOM-killed again and again is
// rolled back after its first step: it only ever ran on the highest
// ordinal (db-3), and db-3 is back on the old revision with the same
// volume. A healthy revision is promoted to partition 0: every pod runs
// it, no pod of the old revision is left, every claim is the one it was,
// and the Service still selects every pod as it did.
func TestStatefulSet_PartitionRollsBackAndPromotes(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	const replicas = 4
	for i := range replicas {
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", ns, i)},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
				AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
				StorageClassName:              "",
				PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/" + ns + fmt.Sprint(i)}},
				ClaimRef:                      &corev1.ObjectReference{Namespace: ns, Name: fmt.Sprintf("data-db-%d", i)},
			},
		}
		g.Expect(k8s.Create(ctx, pv)).To(Succeed())
		t.Cleanup(func() { _ = k8s.Delete(context.Background(), pv) })
	}
	// Every pod processes 20 jobs a second of its own (testbed_jobs_total).
	jobs := map[string]string{testbed.JobsPerSecondAnnotation: "20"}
	svc := testobj.MakeService("db", ns).Selector(map[string]string{"app": "db"}).Obj()
	g.Expect(k8s.Create(ctx, svc)).To(Succeed())
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns, Labels: map[string]string{"app": "db"}},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr.To(int32(replicas)),
			ServiceName: "db",
			Selector:    &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "db"}, Annotations: jobs},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "db", Image: "db:v1",
					Ports:        []corev1.ContainerPort{{Name: "http", ContainerPort: 9898}},
					VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
				}}},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					StorageClassName: ptr.To(""),
					Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
				},
			}},
		},
	}
	g.Expect(k8s.Create(ctx, sts)).To(Succeed())
	g.Eventually(func() int32 { return readyPods(ctx, ns, "db") }, 60*time.Second, 200*time.Millisecond).Should(BeEquivalentTo(replicas),
		"the StatefulSet runs its 4 pods, each with its volume bound")
	claims := claimUIDs(g, ns)
	g.Expect(claims).To(HaveLen(replicas))

	// The share of failed jobs of the pods {{ pods }} names: the canary's
	// ordinals, db-3 at the first share.
	g.Expect(k8s.Create(ctx, &v1alpha1.MetricTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "job-errors", Namespace: ns},
		Spec: v1alpha1.MetricTemplateSpec{
			Provider: v1alpha1.MetricProvider{Type: v1alpha1.PrometheusProvider, Address: prom.URL},
			Query: `100 * sum(rate(testbed_jobs_total{namespace="{{ namespace }}",pod=~"{{ pods }}",outcome="error"}[{{ interval }}]) or vector(0))
  / sum(rate(testbed_jobs_total{namespace="{{ namespace }}",pod=~"{{ pods }}"}[{{ interval }}]))`,
		},
	})).To(Succeed())
	c := testobj.MakeCanary("db", ns).Target("apps/v1", "StatefulSet", "db").ProgressDeadlineSeconds(60).
		Routing(v1alpha1.CanaryRouting{Provider: v1alpha1.ReplicasRouting}).
		Analysis(v1alpha1.CanaryAnalysis{
			Interval:    &metav1.Duration{Duration: 3 * time.Second},
			Threshold:   1,
			StepWeights: []int{25, 50},
			Metrics: []v1alpha1.CanaryMetric{{Name: v1alpha1.PodRestartsCheck}, {
				Name: "job-errors", TemplateRef: &v1alpha1.TemplateReference{Name: "job-errors"},
				ThresholdRange: &v1alpha1.ThresholdRange{Max: ptrFloat(1)}, Interval: &metav1.Duration{Duration: 2 * time.Second},
			}},
		}).Obj()
	c.Spec.Service = v1alpha1.CanaryService{}
	g.Expect(k8s.Create(ctx, c)).To(Succeed())
	waitForPhase(g, c, v1alpha1.PhaseInitialized, 60*time.Second)
	g.Expect(partitionOf(g, ns)).To(BeEquivalentTo(replicas), "initialized: the partition holds every pod")

	// Which pods ran which image, on every change of the namespace's pods.
	seen := &imagesSeen{byImage: map[string]map[string]bool{}}
	changed := make(chan struct{}, 1)
	cache := watchNamespace(t, ns, changed, &corev1.Pod{}, &appsv1.StatefulSet{})
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-changed:
			case <-time.After(500 * time.Millisecond):
			}
			var pods corev1.PodList
			if err := cache.List(ctx, &pods, client.InNamespace(ns)); err == nil {
				seen.record(pods.Items)
			}
			got := &appsv1.StatefulSet{}
			if err := cache.Get(ctx, types.NamespacedName{Namespace: ns, Name: "db"}, got); err == nil && got.Spec.UpdateStrategy.RollingUpdate != nil {
				seen.partition(ptr.Deref(got.Spec.UpdateStrategy.RollingUpdate.Partition, 0))
			}
		}
	}()
	t.Cleanup(func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		<-done
	})

	// A revision whose pods keep being OOM-killed, and fail 40 % of their
	// jobs.
	bad := map[string]string{testbed.RestartsAnnotation: "3", testbed.RestartReasonAnnotation: "OOMKilled", testbed.ErrorPercentAnnotation: "40"}
	maps.Copy(bad, jobs)
	patchTemplate(g, ns, "db:v2", bad)
	waitForPhase(g, c, v1alpha1.PhaseFailed, 90*time.Second)
	record := whyStuck(c)
	t.Logf("rolled back: %s", record)
	g.Expect(record).To(MatchRegexp(`weight 25 Failed .*pod-restarts=\"3\" Failed "metric pod-restarts: 3 restarts of the canary's 1 pods > 0`),
		"rolled back by pod-restarts at the first share, db-3 alone")
	// The canary's job errors are db-3's alone: up to 40 % (its series
	// goes on from the old db-3's, same name), where all four pods together
	// could not be more than 10 %.
	jobErrors := -1.0
	for _, st := range c.Status.Analyses[0].Steps {
		for _, ch := range st.Checks {
			if ch.Name == "job-errors" && st.Weight == 25 {
				jobErrors, _ = strconv.ParseFloat(ch.Value, 64)
			}
		}
	}
	g.Expect(jobErrors).To(BeNumerically(">", 10), "{{ pods }} named the canary's pod only")
	g.Expect(jobErrors).To(BeNumerically("<=", 40))
	g.Eventually(func(g Gomega) {
		names := map[string]string{}
		for _, p := range livePods(g, ns, client.MatchingLabels{"app": "db"}) {
			if podReady(&p) {
				names[p.Name] = p.Spec.Containers[0].Image
			}
		}
		g.Expect(names).To(Equal(map[string]string{"db-0": "db:v1", "db-1": "db:v1", "db-2": "db:v1", "db-3": "db:v1"}))
	}, 60*time.Second, 200*time.Millisecond).Should(Succeed(), "db-3 is back on the old revision, every pod ready")
	g.Expect(seen.pods("db:v2")).To(Equal([]string{"db-3"}), "the failing revision only ever ran on the highest ordinal")
	g.Expect(claimUIDs(g, ns)).To(Equal(claims), "every claim kept, db-3's included")
	g.Expect(partitionOf(g, ns)).To(BeEquivalentTo(replicas))

	g.Expect(seen.partitionsSeen()).To(Equal([]int32{4, 3, 4}), "the failing revision's partition: 3 (its 25 %% share), then back")

	// A healthy revision: 25 %, 50 %, then partition 0.
	seen.resetPartitions()
	patchTemplate(g, ns, "db:v3", jobs)
	waitForPhase(g, c, v1alpha1.PhaseSucceeded, 120*time.Second)
	g.Eventually(func(g Gomega) {
		pods := livePods(g, ns, client.MatchingLabels{"app": "db"})
		for _, p := range pods {
			g.Expect(p.Spec.Containers[0].Image).To(Equal("db:v3"), "no pod of an old revision left: %s", p.Name)
			g.Expect(podReady(&p)).To(BeTrue(), "%s ready", p.Name)
		}
		g.Expect(pods).To(HaveLen(replicas))
	}, 60*time.Second, 200*time.Millisecond).Should(Succeed())
	g.Expect(claimUIDs(g, ns)).To(Equal(claims), "every claim kept through the promotion")
	g.Expect(partitionOf(g, ns)).To(BeEquivalentTo(replicas), "promoted: the partition holds every pod again for the next revision")
	g.Expect(seen.pods("db:v3")).To(ConsistOf("db-0", "db-1", "db-2", "db-3"))
	g.Expect(seen.partitionsSeen()).To(Equal([]int32{4, 3, 2, 0, 4}), "partition 3 (25 %%), 2 (50 %%), 0 (promoted), then the replicas again")
	got := &corev1.Service{}
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "db"}, got)).To(Succeed())
	g.Expect(got.Spec.Selector).To(Equal(map[string]string{"app": "db"}), "the Service still selects every pod")
	var services corev1.ServiceList
	g.Expect(k8s.List(ctx, &services, client.InNamespace(ns))).To(Succeed())
	g.Expect(services.Items).To(HaveLen(1), "serin generated no Service")
}

// A tired operator sets a StatefulSet's partition to 0 by hand between
// rollouts, which would let the next template reach every pod unanalysed:
// serin puts it back. A StatefulSet with updateStrategy OnDelete, which
// ignores a partition, stalls its Canary with a message that says why.
func TestStatefulSet_HandEditedPartitionPutBackAndOnDeleteRefused(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	makeSTS := func(name string, strategy appsv1.StatefulSetUpdateStrategyType) {
		g.Expect(k8s.Create(ctx, &appsv1.StatefulSet{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: appsv1.StatefulSetSpec{
				Replicas:       ptr.To(int32(2)),
				ServiceName:    name,
				Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
				UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: strategy},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: name + ":v1"}}},
				},
			},
		})).To(Succeed())
	}
	makeCanary := func(name string) *v1alpha1.Canary {
		c := testobj.MakeCanary(name, ns).Target("apps/v1", "StatefulSet", name).
			Routing(v1alpha1.CanaryRouting{Provider: v1alpha1.ReplicasRouting}).
			Analysis(v1alpha1.CanaryAnalysis{Interval: &metav1.Duration{Duration: interval}, StepWeights: []int{50}}).Obj()
		c.Spec.Service = v1alpha1.CanaryService{}
		g.Expect(k8s.Create(ctx, c)).To(Succeed())
		return c
	}

	makeSTS("db", appsv1.RollingUpdateStatefulSetStrategyType)
	c := makeCanary("db")
	waitForPhase(g, c, v1alpha1.PhaseInitialized, 60*time.Second)
	sts := &appsv1.StatefulSet{}
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: "db"}, sts)).To(Succeed())
	patch := client.MergeFrom(sts.DeepCopy())
	sts.Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To(int32(0))
	g.Expect(k8s.Patch(ctx, sts, patch)).To(Succeed())
	g.Eventually(func() int32 { return partitionOf(g, ns) }, 30*time.Second, 100*time.Millisecond).Should(BeEquivalentTo(2),
		"serin put the partition back to the replicas")

	makeSTS("legacy", appsv1.OnDeleteStatefulSetStrategyType)
	legacy := makeCanary("legacy")
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(legacy), legacy)).To(Succeed())
		g.Expect(conditions.GetReason(legacy, meta.StalledCondition)).To(Equal(v1alpha1.InvalidTargetReason))
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	msg := conditions.GetMessage(legacy, meta.StalledCondition)
	t.Logf("Stalled: %s", msg)
	g.Expect(msg).To(ContainSubstring("updateStrategy OnDelete"))
	g.Expect(msg).To(ContainSubstring("set updateStrategy.type RollingUpdate"))
}

// The GitOps loop for a StatefulSet kept in Git and applied by Flux: a
// commit whose pods are OOM-killed is rolled back by its partition, and
// serin opens a pull request that reverts the commit (the image tag and
// the pod annotation); merged, Flux applies the good template, which the
// pods already run, and serin accepts it without an analysis. The
// partition serin holds is not in Git: Flux's server-side apply leaves it.
func TestStatefulSet_FailedRevisionRevertedInGit(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	files := func(tag, templateMeta string) map[string]string {
		return map[string]string{
			"apps/podinfo/kustomization.yaml": fmt.Sprintf(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: %s
resources:
  - statefulset.yaml
  - canary.yaml
images:
  - name: db
    newTag: %s
`, ns, tag),
			"apps/podinfo/statefulset.yaml": `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  replicas: 3
  serviceName: db
  selector:
    matchLabels:
      app: db
  template:
    metadata:` + templateMeta + `
      labels:
        app: db
    spec:
      containers:
        - name: db
          image: db
`,
			"apps/podinfo/canary.yaml": `apiVersion: serin.dev/v1alpha1
kind: Canary
metadata:
  name: db
spec:
  targetRef:
    apiVersion: apps/v1
    kind: StatefulSet
    name: db
  progressDeadlineSeconds: 60
  routing:
    provider: replicas
  analysis:
    interval: 2s
    threshold: 1
    stepWeights: [50]
    metrics:
      - name: pod-restarts
  gitops:
    revert:
      on: [Failed]
      mode: PullRequest
`,
		}
	}
	f := newFleet(t, g, ns, files("v1", ""))
	first, err := f.repo.Reference("refs/heads/main", true)
	g.Expect(err).NotTo(HaveOccurred())
	good := first.Hash().String()
	f.sync(g, good)
	c := &v1alpha1.Canary{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns}}
	waitForPhase(g, c, v1alpha1.PhaseInitialized, 60*time.Second)
	g.Expect(partitionOf(g, ns)).To(BeEquivalentTo(3))

	bad := f.push(files("v2", "\n      annotations:\n        "+testbed.RestartsAnnotation+`: "2"`), "Release db v2")
	f.sync(g, bad)
	waitForPhase(g, c, v1alpha1.PhaseFailed, 90*time.Second)
	g.Expect(c.Status.LastAttemptedRevision).To(Equal("main@sha1:" + bad))
	revert := waitForRevert(g, c, gitops.StateOpened)
	g.Expect(revert.Revision).To(Equal("main@sha1:" + bad))
	pr, merged := mergeRevert(t, g, f, revert)
	g.Expect(pr.Title).To(Equal("Revert StatefulSet/db in " + ns + " to " + good[:8]))
	diff := revertDiff(g, f, pr)
	t.Logf("revert pull request %s:\n%s", pr.HTMLURL, diff)
	g.Expect(diff).To(ContainSubstring("-    newTag: v2"))
	g.Expect(diff).To(ContainSubstring("+    newTag: v1"))
	g.Expect(diff).To(ContainSubstring("-        " + testbed.RestartsAnnotation))

	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
		g.Expect(c.Status.LastAttemptedRevision).To(Equal("main@sha1:" + merged))
		pods := livePods(g, ns, client.MatchingLabels{"app": "db"})
		for _, p := range pods {
			g.Expect(p.Spec.Containers[0].Image).To(Equal("db:v1"), "%s back on v1", p.Name)
		}
		g.Expect(pods).To(HaveLen(3))
	}, 60*time.Second, 200*time.Millisecond).Should(Succeed())
	g.Expect(c.Status.LastPromotedRevision).To(Equal("main@sha1:" + good))
	g.Expect(partitionOf(g, ns)).To(BeEquivalentTo(3), "Flux's apply left serin's partition")
}

// A wave of StatefulSets in one cluster: staging and production each keep
// a StatefulSet podinfo in Git, applied by Flux as the namespace's service
// account. A release committed to staging only is rolled out there by
// partition, soaks (pod-restarts held on its pods), and comes to
// production as one pull request with the promoted image; merged,
// production's Canary rolls it out by partition and its verdict comes
// back to staging's status as a commit status.
func TestStatefulSet_WaveCarriesTheRevisionToProduction(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	w := newWaveRepository(t, g, testbedCluster())
	stg, prod := w.staging.ns, w.production.ns
	files := func(stagingTag, productionTag string) map[string]string {
		kustomization := func(ns, tag, extra string) string {
			return fmt.Sprintf(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: %s
images:
  - name: podinfo
    newTag: %s # the released version
resources:
  - statefulset.yaml
  - canary.yaml
%s`, ns, tag, extra)
		}
		statefulSet := `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: podinfo
spec:
  replicas: 2
  serviceName: podinfo
  selector:
    matchLabels:
      app: podinfo
  template:
    metadata:
      labels:
        app: podinfo
    spec:
      containers:
        - name: podinfo
          image: podinfo
`
		canary := func(extra string) string {
			return `apiVersion: serin.dev/v1alpha1
kind: Canary
metadata:
  name: podinfo
spec:
  targetRef:
    apiVersion: apps/v1
    kind: StatefulSet
    name: podinfo
  progressDeadlineSeconds: 60
  routing:
    provider: replicas
  analysis:
    interval: 2s
    threshold: 1
    stepWeights: [50]
    metrics:
      - name: pod-restarts
        thresholdRange:
          max: 0
` + extra
		}
		return map[string]string{
			"staging/kustomization.yaml":    kustomization(stg, stagingTag, ""),
			"staging/statefulset.yaml":      statefulSet,
			"staging/canary.yaml":           canary("  gitops:" + wavePromote(prod, 2*time.Second) + "\n"),
			"production/kustomization.yaml": kustomization(prod, productionTag, "  - provider.yaml\n"),
			"production/statefulset.yaml":   statefulSet,
			"production/canary.yaml": canary(`  alerts:
    - name: git
      providerRef:
        name: commit-status
`),
			"production/provider.yaml": commitStatusProvider(gitea.RepositoryURL(stg)),
		}
	}
	first := w.staging.push(files("v1", "v1"), "Add podinfo to staging and production")
	w.apply(t, g, first, nil)

	w.staging.pull(g)
	v2 := w.staging.push(files("v2", "v1"), "Release podinfo v2 to staging")
	w.staging.sync(g, v2)
	w.waitForPhase(g, stg, v1alpha1.PhaseSucceeded, 90*time.Second)
	opened := w.stage(g, v2, v1alpha1.WaveOpened, 60*time.Second)
	g.Expect(opened.Images).To(Equal([]string{"podinfo:v2"}), "the images the promoted StatefulSet runs")
	pr := w.promotionPR(g, v2)
	diff, err := gitea.Raw(ctx, fmt.Sprintf("/repos/%s/%s/pulls/%d.diff", gitea.User, w.staging.name, pr.Number))
	g.Expect(err).NotTo(HaveOccurred())
	t.Logf("promotion pull request %s:\n%s", pr.HTMLURL, diff)
	g.Expect(diff).To(ContainSubstring("+    newTag: v2 # the released version"))
	g.Expect(diff).NotTo(ContainSubstring("staging/"), "the pull request changes production only")

	m2 := w.merge(g, pr)
	w.waitForPhase(g, prod, v1alpha1.PhaseSucceeded, 90*time.Second)
	g.Expect(w.canary(g, prod).Status.LastPromotedRevision).To(Equal("main@sha1:" + m2))
	done := w.stage(g, v2, v1alpha1.WaveSucceeded, 60*time.Second)
	g.Expect(done.StageCommit).To(Equal(m2), "the verdict is the one production posted on the merge")
	for _, p := range livePods(g, prod, client.MatchingLabels{"app": "podinfo"}) {
		g.Expect(p.Spec.Containers[0].Image).To(Equal("podinfo:v2"), "production's %s runs the promoted revision", p.Name)
	}
}

// imagesSeen records which pods ran each image, and the StatefulSet's
// partitions in the order they came.
type imagesSeen struct {
	mu         sync.Mutex
	byImage    map[string]map[string]bool
	partitions []int32
}

func (s *imagesSeen) partition(p int32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.partitions); n == 0 || s.partitions[n-1] != p {
		s.partitions = append(s.partitions, p)
	}
}

func (s *imagesSeen) partitionsSeen() []int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.partitions)
}

// resetPartitions starts a new sequence from the last partition seen.
func (s *imagesSeen) resetPartitions() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.partitions); n > 0 {
		s.partitions = s.partitions[n-1:]
	}
}

func (s *imagesSeen) record(pods []corev1.Pod) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range pods {
		img := p.Spec.Containers[0].Image
		if s.byImage[img] == nil {
			s.byImage[img] = map[string]bool{}
		}
		s.byImage[img][p.Name] = true
	}
}

// pods are the names of the pods seen running image, sorted.
func (s *imagesSeen) pods(image string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.byImage[image]))
}

// claimUIDs are the UIDs of the namespace's PersistentVolumeClaims by name.
func claimUIDs(g Gomega, ns string) map[string]types.UID {
	var claims corev1.PersistentVolumeClaimList
	g.Expect(k8s.List(context.Background(), &claims, client.InNamespace(ns))).To(Succeed())
	out := map[string]types.UID{}
	for _, c := range claims.Items {
		g.Expect(c.Status.Phase).To(Equal(corev1.ClaimBound), "claim %s bound", c.Name)
		out[c.Name] = c.UID
	}
	return out
}

// partitionOf is the partition of the StatefulSet db.
func partitionOf(g Gomega, ns string) int32 {
	sts := &appsv1.StatefulSet{}
	g.Expect(k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "db"}, sts)).To(Succeed())
	if sts.Spec.UpdateStrategy.RollingUpdate == nil {
		return 0
	}
	return ptr.Deref(sts.Spec.UpdateStrategy.RollingUpdate.Partition, 0)
}

// patchTemplate gives the StatefulSet db a new revision, as a Git commit
// applied by Flux would: the image and the pod annotations.
func patchTemplate(g Gomega, ns, image string, annotations map[string]string) {
	sts := &appsv1.StatefulSet{}
	g.Expect(k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "db"}, sts)).To(Succeed())
	patch := client.MergeFrom(sts.DeepCopy())
	sts.Spec.Template.Spec.Containers[0].Image = image
	sts.Spec.Template.Annotations = annotations
	g.Expect(k8s.Patch(context.Background(), sts, patch)).To(Succeed())
}
