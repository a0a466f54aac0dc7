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
