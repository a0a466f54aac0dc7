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
	"fmt"
	"net/url"
	"path"
	"strings"

	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
)

// discordRequest posts a Slack-formatted message to the webhook's
// Slack-compatible endpoint (the address with /slack appended, unless it
// already ends so). The username defaults to the reporting controller.
func discordRequest(cfg providerConfig, e eventv1.Event) (request, error) {
	address := cfg.address
	if !strings.HasSuffix(address, "/slack") {
		u, err := url.ParseRequestURI(address)
		if err != nil {
			return request{}, fmt.Errorf("invalid Discord hook URL: %w", err)
		}
		u.Path = path.Join(u.Path, "slack")
		address = u.String()
	}
	p := slackPayload{Username: cfg.username}
	if p.Username == "" {
		p.Username = e.ReportingController
	}
	color := "good"
	if e.Severity == eventv1.EventSeverityError {
		color = "danger"
	}
	p.Attachments = []slackAttachment{slackAttachmentOf(e, color)}
	return jsonRequest(address, p, nil)
}
