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

	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
)

// googleChatPayload is a Google Chat message with one card (the v1 cards
// format incoming webhooks accept).
type googleChatPayload struct {
	Cards []googleChatCard `json:"cards"`
}

type googleChatCard struct {
	Header   googleChatHeader    `json:"header"`
	Sections []googleChatSection `json:"sections"`
}

type googleChatHeader struct {
	Title      string  `json:"title"`
	SubTitle   string  `json:"subtitle"`
	ImageURL   *string `json:"imageUrl"`
	ImageStyle *string `json:"imageStyle"`
}

type googleChatSection struct {
	Header  string             `json:"header"`
	Widgets []googleChatWidget `json:"widgets"`
}

type googleChatWidget struct {
	TextParagraph *googleChatTextParagraph `json:"textParagraph"`
	KeyValue      *googleChatKeyValue      `json:"keyValue"`
}

type googleChatTextParagraph struct {
	Text string `json:"text"`
}

type googleChatKeyValue struct {
	TopLabel         string  `json:"topLabel"`
	Content          string  `json:"content"`
	ContentMultiline bool    `json:"contentMultiline"`
	BottomLabel      *string `json:"bottomLabel"`
	Icon             *string `json:"icon"`
}

// googleChatRequest posts a card: the object as title, the reporting
// controller as subtitle, the message (red for errors), then the metadata
// as key/value widgets.
func googleChatRequest(cfg providerConfig, e eventv1.Event) (request, error) {
	text := e.Message
	if e.Severity == eventv1.EventSeverityError {
		text = fmt.Sprintf(`<font color="#ff0000">%s</font>`, e.Message)
	}
	sections := []googleChatSection{{
		Widgets: []googleChatWidget{{TextParagraph: &googleChatTextParagraph{Text: text}}},
	}}
	if len(e.Metadata) > 0 {
		widgets := make([]googleChatWidget, 0, len(e.Metadata))
		for _, k := range sortedKeys(e.Metadata) {
			widgets = append(widgets, googleChatWidget{KeyValue: &googleChatKeyValue{TopLabel: k, Content: e.Metadata[k]}})
		}
		sections = append(sections, googleChatSection{Widgets: widgets})
	}
	p := googleChatPayload{Cards: []googleChatCard{{
		Header:   googleChatHeader{Title: objectName(e), SubTitle: e.ReportingController},
		Sections: sections,
	}}}
	return jsonRequest(cfg.address, p, nil)
}
