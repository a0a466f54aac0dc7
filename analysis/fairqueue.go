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

package analysis

import "slices"

// fairQueue holds the Works waiting to start: one first-in first-out queue
// per namespace (a tenant), served in turn, each namespace with at most
// its share of the steps in flight. A namespace with hundreds of steps
// waiting on a hanging webhook holds its share and no more, and its
// queue never stands in front of another namespace's next step.
type fairQueue struct {
	byNamespace map[string][]*run
	// turns are the namespaces with Works waiting, in the order they are
	// served; next is the one whose turn it is.
	turns []string
	next  int
	// inFlight counts each namespace's steps started and not ended.
	inFlight map[string]int
	waiting  int
}

func newFairQueue() *fairQueue {
	return &fairQueue{byNamespace: map[string][]*run{}, inFlight: map[string]int{}}
}

// len is the number of Works waiting.
func (q *fairQueue) len() int { return q.waiting }

// push queues w at the end of its namespace's queue.
func (q *fairQueue) push(w *run) {
	ns := w.canary.Namespace
	if len(q.byNamespace[ns]) == 0 {
		q.turns = append(q.turns, ns)
	}
	q.byNamespace[ns] = append(q.byNamespace[ns], w)
	q.waiting++
}

// remove takes w out of the queue; false when it was not waiting.
func (q *fairQueue) remove(w *run) bool {
	ns := w.canary.Namespace
	i := slices.Index(q.byNamespace[ns], w)
	if i < 0 {
		return false
	}
	q.byNamespace[ns] = slices.Delete(q.byNamespace[ns], i, i+1)
	q.waiting--
	if len(q.byNamespace[ns]) == 0 {
		q.dropTurn(ns)
	}
	return true
}

// pop returns the next Work to start: the first of the next namespace in
// turn whose steps in flight are under share; nil when every namespace
// with Works waiting has its share in flight (or none waits). The Work
// counts in flight for its namespace until ended is called.
func (q *fairQueue) pop(share int) *run {
	for range len(q.turns) {
		if q.next >= len(q.turns) {
			q.next = 0
		}
		ns := q.turns[q.next]
		if q.inFlight[ns] >= share {
			q.next++
			continue
		}
		w := q.byNamespace[ns][0]
		q.byNamespace[ns] = q.byNamespace[ns][1:]
		q.waiting--
		q.inFlight[ns]++
		if len(q.byNamespace[ns]) == 0 {
			q.dropTurn(ns) // the next namespace takes its place in turn
		} else {
			q.next++
		}
		return w
	}
	return nil
}

// ended counts a step of namespace ns out of flight.
func (q *fairQueue) ended(ns string) {
	if q.inFlight[ns]--; q.inFlight[ns] <= 0 {
		delete(q.inFlight, ns)
	}
}

// dropTurn removes a namespace with nothing waiting from the turns.
func (q *fairQueue) dropTurn(ns string) {
	i := slices.Index(q.turns, ns)
	if i < 0 {
		return
	}
	q.turns = slices.Delete(q.turns, i, i+1)
	delete(q.byNamespace, ns)
	if i < q.next {
		q.next--
	}
}
