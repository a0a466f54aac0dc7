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
	"strings"

	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
)

// msteamsRequest posts to a Microsoft Teams incoming webhook: an Adaptive
// Card (Workflows/Power Automate webhooks), or the legacy MessageCard when
// the address is an Office 365 connector (*.webhook.office.com).
func msteamsRequest(cfg providerConfig, e eventv1.Event) (request, error) {
	u, err := url.ParseRequestURI(cfg.address)
	if err != nil {
		return request{}, fmt.Errorf("invalid MS Teams webhook URL: %w", err)
	}
	if strings.HasSuffix(u.Hostname(), ".webhook.office.com") {
		return jsonRequest(cfg.address, messageCardOf(e), nil)
	}
	return jsonRequest(cfg.address, adaptiveCardOf(e), nil)
}

// messageCard is the legacy Office 365 connector card.
type messageCard struct {
	Type       string               `json:"@type"`
	Context    string               `json:"@context"`
	ThemeColor string               `json:"themeColor"`
	Summary    string               `json:"summary"`
	Sections   []messageCardSection `json:"sections"`
}

type messageCardSection struct {
	ActivityTitle    string            `json:"activityTitle"`
	ActivitySubtitle string            `json:"activitySubtitle"`
	Facts            []messageCardFact `json:"facts"`
}

type messageCardFact struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

func messageCardOf(e eventv1.Event) messageCard {
	facts := make([]messageCardFact, 0, len(e.Metadata))
	for _, k := range sortedKeys(e.Metadata) {
		facts = append(facts, messageCardFact{Name: k, Value: e.Metadata[k]})
	}
	color := "0076D7"
	if e.Severity == eventv1.EventSeverityError {
		color = "FF0000"
	}
	return messageCard{
		Type:       "MessageCard",
		Context:    "http://schema.org/extensions",
		ThemeColor: color,
		Summary:    objectName(e),
		Sections: []messageCardSection{{
			ActivityTitle:    e.Message,
			ActivitySubtitle: objectName(e),
			Facts:            facts,
		}},
	}
}

// adaptiveCardVersion is the newest Adaptive Card schema Teams renders.
const adaptiveCardVersion = "1.4"

// adaptiveCardMessage is a Teams message carrying one Adaptive Card.
type adaptiveCardMessage struct {
	Type        string                   `json:"type"`
	Attachments []adaptiveCardAttachment `json:"attachments"`
}

type adaptiveCardAttachment struct {
	ContentType string              `json:"contentType"`
	Content     adaptiveCardContent `json:"content"`
}

type adaptiveCardContent struct {
	Schema  string             `json:"$schema"`
	Type    string             `json:"type"`
	Version string             `json:"version"`
	Body    []adaptiveCardItem `json:"body"`
	MSTeams adaptiveCardTeams  `json:"msteams"`
}

type adaptiveCardTeams struct {
	Width string `json:"width,omitempty"`
}

// adaptiveCardItem is a Container, TextBlock or FactSet; the fields of the
// other kinds stay empty and are omitted.
type adaptiveCardItem struct {
	Type   string             `json:"type"`
	Items  []adaptiveCardItem `json:"items,omitempty"`
	Text   string             `json:"text,omitempty"`
	Size   string             `json:"size,omitempty"`
	Weight string             `json:"weight,omitempty"`
	Color  string             `json:"color,omitempty"`
	Wrap   bool               `json:"wrap,omitempty"`
	Facts  []adaptiveCardFact `json:"facts,omitempty"`
}

type adaptiveCardFact struct {
	Title string `json:"title"`
	Value string `json:"value"`
}

// adaptiveCardOf renders the object as a large bold title, the message
// (red for errors) and the metadata as facts: "summary" first, then the
// other keys in order.
func adaptiveCardOf(e eventv1.Event) adaptiveCardMessage {
	facts := make([]adaptiveCardFact, 0, len(e.Metadata))
	if s, ok := e.Metadata["summary"]; ok {
		facts = append(facts, adaptiveCardFact{Title: "summary", Value: s})
	}
	for _, k := range sortedKeys(e.Metadata) {
		if k != "summary" {
			facts = append(facts, adaptiveCardFact{Title: k, Value: e.Metadata[k]})
		}
	}
	message := adaptiveCardItem{Type: "TextBlock", Text: e.Message, Wrap: true}
	if e.Severity == eventv1.EventSeverityError {
		message.Color = "attention"
	}
	return adaptiveCardMessage{
		Type: "message",
		Attachments: []adaptiveCardAttachment{{
			ContentType: "application/vnd.microsoft.card.adaptive",
			Content: adaptiveCardContent{
				Schema:  "http://adaptivecards.io/schemas/adaptive-card.json",
				Type:    "AdaptiveCard",
				Version: adaptiveCardVersion,
				MSTeams: adaptiveCardTeams{Width: "Full"},
				Body: []adaptiveCardItem{{
					Type: "Container",
					Items: []adaptiveCardItem{
						{Type: "TextBlock", Text: objectName(e), Size: "large", Weight: "bolder", Wrap: true},
						message,
						{Type: "FactSet", Facts: facts},
					},
				}},
			},
		}},
	}
}
