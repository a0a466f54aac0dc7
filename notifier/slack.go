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
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
)

// slackPostMessageURL is Slack's Web API; any other address is an
// incoming webhook.
const slackPostMessageURL = "https://slack.com/api/chat.postMessage"

// slackPayload is a Slack message with one attachment (also the payload of
// Discord's Slack-compatible endpoint and of Rocket.Chat).
type slackPayload struct {
	Channel     string            `json:"channel"`
	Username    string            `json:"username"`
	IconURL     string            `json:"icon_url"`
	IconEmoji   string            `json:"icon_emoji"`
	Text        string            `json:"text,omitempty"`
	Attachments []slackAttachment `json:"attachments,omitempty"`
}

type slackAttachment struct {
	Fallback   string       `json:"fallback"`
	Color      string       `json:"color"`
	AuthorName string       `json:"author_name"`
	Text       string       `json:"text"`
	MrkdwnIn   []string     `json:"mrkdwn_in"`
	Fields     []slackField `json:"fields"`
}

type slackField struct {
	Title string `json:"title"`
	Value string `json:"value"`
	Short bool   `json:"short"`
}

// slackAttachmentOf renders an event as an attachment: the message as
// markdown text, the metadata as fields, the author kind/name.namespace.
func slackAttachmentOf(e eventv1.Event, color string) slackAttachment {
	fields := make([]slackField, 0, len(e.Metadata))
	for _, k := range sortedKeys(e.Metadata) {
		fields = append(fields, slackField{Title: k, Value: e.Metadata[k]})
	}
	return slackAttachment{
		Color:      color,
		AuthorName: objectName(e),
		Text:       e.Message,
		MrkdwnIn:   []string{"text"},
		Fields:     fields,
	}
}

// slackRequest posts to a Slack incoming webhook, or to chat.postMessage
// with the Provider's token as bearer token. The username defaults to the
// reporting controller; errors are red ("danger"), the rest green ("good").
func slackRequest(cfg providerConfig, e eventv1.Event) (request, error) {
	p := slackPayload{Channel: cfg.channel, Username: cfg.username}
	if p.Username == "" {
		p.Username = e.ReportingController
	}
	color := "good"
	if e.Severity == eventv1.EventSeverityError {
		color = "danger"
	}
	a := slackAttachmentOf(e, color)
	a.Fallback = fmt.Sprintf("%s: %s", a.AuthorName, strings.Split(e.Message, "\n")[0])
	p.Attachments = []slackAttachment{a}

	header := http.Header{}
	if cfg.token != "" {
		header.Set("Authorization", "Bearer "+cfg.token)
	}
	req, err := jsonRequest(cfg.address, p, header)
	if err != nil {
		return req, err
	}
	if cfg.address == slackPostMessageURL {
		req.validate = validateSlackResponse
	}
	return req, nil
}

// validateSlackResponse checks chat.postMessage's answer, which is 200 OK
// even when the message was refused.
func validateSlackResponse(resp *http.Response) error {
	if err := expect2xx(resp); err != nil {
		return err
	}
	var r struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return fmt.Errorf("unable to decode the Slack response: %w", err)
	}
	if !r.OK {
		return fmt.Errorf("slack responded with error: %s", r.Error)
	}
	return nil
}
