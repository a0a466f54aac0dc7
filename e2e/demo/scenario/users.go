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

	"github.com/serin-dev/serin/internal/testing/testbed"
)

// usersRate is the requests per second the app's users send.
const usersRate = 50

// startUsers starts the users of host: requests through the Gateway until
// ctx ends (bounded at 15 minutes), and a line per analysis interval with
// what they saw, prefixed with label unless it is empty. It returns once
// the app answered them (the Gateway has programmed the new route), with
// when it first did: the requests sent before may have found no route.
func (p *play) startUsers(ctx context.Context, host, label string) (*testbed.Load, time.Time, error) {
	users := testbed.StartLoad(ctx, testbed.LoadOptions{
		URL: p.env.GatewayURL + "/", Host: host, Rate: usersRate, Duration: 15 * time.Minute,
	})
	var first time.Time
	answered := func() (bool, error) {
		for _, s := range users.Samples(time.Time{}, time.Time{}) {
			if s.OK() {
				first = s.Sent
				return true, nil
			}
		}
		return false, nil
	}
	if err := poll(ctx, p.screen, 30*time.Second, answered, func() string { return "no answer from " + host + " through the Gateway" }); err != nil {
		return users, first, err
	}
	p.screen.Line("users", "%d requests/s to http://%s/ through Traefik (the Gateway gateways/public)", usersRate, host)
	if label != "" {
		label += ": "
	}
	go func() {
		defer users.Stop()
		tick := time.NewTicker(p.interval)
		defer tick.Stop()
		from := time.Now()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-tick.C:
				// The window's last requests may still be in flight.
				c := users.Counts(from.Add(-time.Second), now.Add(-time.Second))
				from = now
				p.screen.Line("users", "%s%s", label, describeUsers(c, p.interval))
			}
		}
	}()
	return users, first, nil
}

// lastVersion is the version that answered the users' last request of
// the last second ("" when none did).
func lastVersion(users *testbed.Load) string {
	s := users.Samples(time.Now().Add(-time.Second), time.Time{})
	if len(s) == 0 {
		return ""
	}
	return s[len(s)-1].Version
}

// describeUsers is one line of what the users saw in a window.
func describeUsers(c testbed.Counts, window time.Duration) string {
	versions := make([]string, 0, len(c.ByVersion))
	for v := range c.ByVersion {
		versions = append(versions, v)
	}
	sort.Strings(versions)
	shares := make([]string, 0, len(versions))
	for _, v := range versions {
		shares = append(shares, fmt.Sprintf("%s %.0f%%", v, c.Share(v)))
	}
	errors := "0 errors"
	if c.Errors > 0 {
		codes := make([]string, 0, len(c.ByCode))
		for code, n := range c.ByCode {
			if code < 200 || code >= 300 {
				codes = append(codes, fmt.Sprintf("%d×%d", n, code))
			}
		}
		sort.Strings(codes)
		errors = fmt.Sprintf("%d errors (%s)", c.Errors, strings.Join(codes, ", "))
	}
	return fmt.Sprintf("%3.0f req/s · %s · served by %s", float64(c.Total)/window.Seconds(), errors, strings.Join(shares, " · "))
}
