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

package controllers

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/serin-dev/serin/gitops"
	"github.com/serin-dev/serin/internal/redact"
)

// gitJobs runs the Canaries' Git work (reverts, promotions and the
// reading of their verdicts) off the reconcile workers, as the analysis
// runner runs their steps: a reconcile that wants the work done asks for
// its result by a revision; the first ask starts the job and returns; the
// job's end enqueues the Canary, whose next reconcile reads the result and
// records it. A clone, a render and a push (up to the revert's 2-minute
// bound) hold no reconcile worker; the Reverter bounds how many run at
// once (--gitops-max-concurrent-reverts). Results live in memory: after a
// restart the work runs again, which the Reverter's idempotency makes
// safe. A Canary has a job per slot (the revert, each stage of its wave).
type gitJobs[R any] struct {
	mu     sync.Mutex
	jobs   map[jobKey]*gitJob[R]
	notify func(types.NamespacedName)
	// base ends every job when the manager stops (Start).
	base context.Context
}

// revertJobs are the Canaries' reverts.
type revertJobs = gitJobs[gitops.RevertResult]

// jobKey names a Canary's job of one slot.
type jobKey struct {
	canary types.NamespacedName
	slot   string
}

// gitJob is the work of one revision of one Canary's slot.
type gitJob[R any] struct {
	revision string
	done     bool
	res      R
	err      error
	cancel   context.CancelFunc
}

func newGitJobs[R any]() *gitJobs[R] {
	return &gitJobs[R]{jobs: map[jobKey]*gitJob[R]{}, base: context.Background()}
}

// result returns the result of the Canary's job of slot for revision,
// and true once it is there (the job is then forgotten: the next ask
// starts another). The first ask starts work in a goroutine with ctx's
// values (the Canary's identity, its logger) but not its deadline, and
// cancels the slot's job of another revision.
func (j *gitJobs[R]) result(ctx context.Context, canary types.NamespacedName, slot, revision string,
	work func(context.Context) (R, error)) (R, error, bool) {
	var zero R
	key := jobKey{canary: canary, slot: slot}
	j.mu.Lock()
	defer j.mu.Unlock()
	if cur := j.jobs[key]; cur != nil {
		if cur.revision == revision {
			if !cur.done {
				return zero, nil, false
			}
			delete(j.jobs, key)
			return cur.res, cur.err, true
		}
		cur.cancel()
	}
	jctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(j.base, cancel)
	job := &gitJob[R]{revision: revision, cancel: cancel}
	j.jobs[key] = job
	go func() {
		defer stop()
		defer cancel()
		res, err := work(jctx)
		// The error goes to status, events and logs: redacted whatever
		// the work's implementation (URLs, tokens of known forms).
		err = redact.Error(err)
		j.mu.Lock()
		current := j.jobs[key] == job
		job.res, job.err, job.done = res, err, true
		notify := j.notify
		j.mu.Unlock()
		if current && notify != nil {
			notify(canary)
		}
	}()
	return zero, nil, false
}

// running reports whether the Canary has a job whose result was not read.
func (j *gitJobs[R]) running(canary types.NamespacedName) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	for k := range j.jobs {
		if k.canary == canary {
			return true
		}
	}
	return false
}

// forget cancels and drops a deleted Canary's jobs.
func (j *gitJobs[R]) forget(canary types.NamespacedName) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for k, cur := range j.jobs {
		if k.canary == canary {
			cur.cancel()
			delete(j.jobs, k)
		}
	}
}

// Start makes the manager's context end every job when it stops.
func (j *gitJobs[R]) Start(ctx context.Context) error {
	j.mu.Lock()
	j.base = ctx
	running := make([]*gitJob[R], 0, len(j.jobs))
	for _, job := range j.jobs {
		running = append(running, job)
	}
	j.mu.Unlock()
	<-ctx.Done()
	for _, job := range running {
		job.cancel()
	}
	return nil
}

// NeedLeaderElection is false: only the leader's reconciles start jobs.
func (j *gitJobs[R]) NeedLeaderElection() bool { return false }

// results is the source that enqueues a Canary whose job ended.
func (j *gitJobs[R]) results() source.Source {
	return source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		j.mu.Lock()
		defer j.mu.Unlock()
		j.notify = func(key types.NamespacedName) { q.Add(reconcile.Request{NamespacedName: key}) }
		return nil
	})
}
