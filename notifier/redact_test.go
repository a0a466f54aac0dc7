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

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// An event whose message quotes an error naming a URL with credentials
// reaches notification-controller redacted: the Flux event, and every
// Alert and Provider after it, never carries the secret.
func TestNotify_RedactsTheMessage(t *testing.T) {
	nc := newSink(t, func(int) int { return http.StatusAccepted })
	b := testBridge(t, Options{Mode: ModeCanary, EventsAddr: nc.URL, Reader: fakeReader(t)})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = b.Start(ctx) }()
	e := halted()
	e.Message = `revert of revision main@sha1:abc failed: failed to clone branch main of https://user:SECRET@git.example/o/r.git?token=SECRET123: Get "https://user:SECRET@git.example/o/r.git/info/refs?service=git-upload-pack": EOF`
	b.Notify(ctx, testCanary(), e)
	deadline := time.Now().Add(10 * time.Second)
	for len(nc.got()) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	evs := ncEvents(t, nc)
	if len(evs) == 0 {
		t.Fatal("no event delivered")
	}
	for _, ev := range evs {
		if strings.Contains(ev.Message, "SECRET") {
			t.Errorf("the Flux event holds a secret: %s", ev.Message)
		}
		if !strings.Contains(ev.Message, "https://redacted@git.example/o/r.git?token=redacted") {
			t.Errorf("the Flux event does not name the repository, redacted: %s", ev.Message)
		}
	}
}
