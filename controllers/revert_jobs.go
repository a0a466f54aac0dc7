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
)

// revertJobs runs the Canaries' Git reverts off the reconcile workers, as
// the analysis runner runs their steps: a reconcile that wants a revert
// asks for its result by revision; the first ask starts the job and
// returns; the job's end enqueues the Canary, whose next reconcile reads
// the result and records it. A clone, a render and a push (up to the
// revert's 2-minute bound) hold no reconcile worker; the Reverter bounds
// how many run at once (--gitops-max-concurrent-reverts). Results live in
// memory: after a restart the revert runs again, which the Reverter's
// idempotency makes safe.
type revertJobs struct {
	mu     sync.Mutex
	jobs   map[types.NamespacedName]*revertJob
	notify func(types.NamespacedName)
	// base ends every job when the manager stops (Start).
	base context.Context
}

// revertJob is the revert of one revision of one Canary.
type revertJob struct {
	revision string
	done     bool
	res      gitops.RevertResult
	err      error
	cancel   context.CancelFunc
}

func newRevertJobs() *revertJobs {
	return &revertJobs{jobs: map[types.NamespacedName]*revertJob{}, base: context.Background()}
}

// result returns the result of the Canary's revert of revision, and true
// once it is there (the job is then forgotten: the next ask starts
// another). The first ask starts revert in a goroutine with ctx's values
// (the Canary's identity, its logger) but not its deadline, and cancels
// the Canary's job of another revision.
func (j *revertJobs) result(ctx context.Context, canary types.NamespacedName, revision string,
	revert func(context.Context) (gitops.RevertResult, error)) (gitops.RevertResult, error, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if cur := j.jobs[canary]; cur != nil {
		if cur.revision == revision {
			if !cur.done {
				return gitops.RevertResult{}, nil, false
			}
			delete(j.jobs, canary)
			return cur.res, cur.err, true
		}
		cur.cancel()
	}
	jctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(j.base, cancel)
	job := &revertJob{revision: revision, cancel: cancel}
	j.jobs[canary] = job
	go func() {
		defer stop()
		defer cancel()
		res, err := revert(jctx)
		j.mu.Lock()
		current := j.jobs[canary] == job
		job.res, job.err, job.done = res, err, true
		notify := j.notify
		j.mu.Unlock()
		if current && notify != nil {
			notify(canary)
		}
	}()
	return gitops.RevertResult{}, nil, false
}

// running reports whether the Canary has a job whose result was not read.
func (j *revertJobs) running(canary types.NamespacedName) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.jobs[canary] != nil
}

// forget cancels and drops a deleted Canary's job.
func (j *revertJobs) forget(canary types.NamespacedName) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if cur := j.jobs[canary]; cur != nil {
		cur.cancel()
		delete(j.jobs, canary)
	}
}

// Start makes the manager's context end every job when it stops.
func (j *revertJobs) Start(ctx context.Context) error {
	j.mu.Lock()
	j.base = ctx
	running := make([]*revertJob, 0, len(j.jobs))
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
func (j *revertJobs) NeedLeaderElection() bool { return false }

// results is the source that enqueues a Canary whose revert ended.
func (j *revertJobs) results() source.Source {
	return source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		j.mu.Lock()
		defer j.mu.Unlock()
		j.notify = func(key types.NamespacedName) { q.Add(reconcile.Request{NamespacedName: key}) }
		return nil
	})
}
