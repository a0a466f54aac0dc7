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
