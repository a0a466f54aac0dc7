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
	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
)

// rocketRequest posts a Slack-formatted message to a Rocket.Chat incoming
// webhook, with the Provider's channel and username (no defaults), blue
// for info and red for errors.
func rocketRequest(cfg providerConfig, e eventv1.Event) (request, error) {
	color := "#0076D7"
	if e.Severity == eventv1.EventSeverityError {
		color = "#FF0000"
	}
	p := slackPayload{
		Channel:     cfg.channel,
		Username:    cfg.username,
		Attachments: []slackAttachment{slackAttachmentOf(e, color)},
	}
	return jsonRequest(cfg.address, p, nil)
}
