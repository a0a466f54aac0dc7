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

package notifier

import "sync"

// jobQueue is one delivery worker's bounded FIFO. When it is full, the
// oldest progress event waiting (a step that moved a rollout on) makes
// room: progress events of a busy moment thin out, while what alerts are
// for (phase changes, failed checks, halts, reverts) keeps its place and
// its order. Only a queue that holds nothing but such events drops the
// newcomer.
type jobQueue struct {
	mu   sync.Mutex
	jobs []job
	size int
	// ready holds a token once a job is pushed; the worker then pops
	// until the queue is empty.
	ready chan struct{}
}

func newJobQueue(size int) *jobQueue {
	return &jobQueue{size: size, ready: make(chan struct{}, 1)}
}

// push queues j and returns the job it dropped to stay within its size:
// the oldest progress event queued, else j itself; nil when it fitted.
func (q *jobQueue) push(j job) (dropped *job) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.jobs) >= q.size {
		i := q.oldestProgress()
		if i < 0 {
			return &j
		}
		d := q.jobs[i]
		q.jobs = append(q.jobs[:i], q.jobs[i+1:]...)
		dropped = &d
	}
	q.jobs = append(q.jobs, j)
	select {
	case q.ready <- struct{}{}:
	default:
	}
	return dropped
}

// oldestProgress is the index of the oldest progress event queued, or -1.
func (q *jobQueue) oldestProgress() int {
	for i, j := range q.jobs {
		if j.event.Progress {
			return i
		}
	}
	return -1
}

// pop takes the oldest job, if any.
func (q *jobQueue) pop() (job, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.jobs) == 0 {
		return job{}, false
	}
	j := q.jobs[0]
	q.jobs[0] = job{}
	q.jobs = q.jobs[1:]
	return j, true
}
