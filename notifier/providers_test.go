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

// These tests post through the whole direct-mode path (Provider and Secret
// read from the API, payload built, HTTP POST with retries) to httptest
// servers and compare the body byte for byte with the payload
// notification-controller v1.9 sends for the same event (read from its
// internal/notifier package). Slack, Microsoft Teams, Discord, Google Chat
// and Rocket.Chat themselves cannot be reached from here: the expected
// payloads are the formats those services document for incoming webhooks
// (Slack attachments, Teams Adaptive Card or Office 365 MessageCard,
// Discord's Slack-compatible /slack endpoint, Google Chat cards v1).

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	notificationv1 "github.com/fluxcd/notification-controller/api/v1beta3"
	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// postDirect delivers e of a canary alerting provider p (with its Secrets)
// and returns what the sink received.
func postDirect(t *testing.T, e Event, p *notificationv1.Provider, objs ...client.Object) []received {
	t.Helper()
	s := newSink(t, nil)
	if p.Spec.Address == "" {
		p.Spec.Address = s.URL + "/hook"
	}
	b := testBridge(t, Options{Mode: ModeDirect, Reader: fakeReader(t, append(objs, p)...)})
	c := withAlerts(testCanary(), alertFor(p.Name, "info"))
	if !deliverNow(b, c, e) {
		t.Fatalf("delivery failed")
	}
	return s.got()
}

// slackFields is the attachment fields of a test event's metadata.
func slackFields(phase, weight string) string {
	var fields []string
	for _, kv := range [][2]string{{"canary", "apps/podinfo"}, {"phase", phase}, {"revision", testRevision}, {"weight", weight}} {
		fields = append(fields, fmt.Sprintf(`{"title": %q, "value": %q, "short": false}`, kv[0], kv[1]))
	}
	return "[" + strings.Join(fields, ", ") + "]"
}

func onlyRequest(t *testing.T, got []received) received {
	t.Helper()
	if len(got) != 1 {
		t.Fatalf("sink received %d requests, want 1", len(got))
	}
	if got[0].method != http.MethodPost {
		t.Errorf("method = %s, want POST", got[0].method)
	}
	if ct := got[0].header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	return got[0]
}

func TestSlack(t *testing.T) {
	s := newSink(t, nil)
	p := provider("slack", notificationv1.SlackProvider, withSecret("slack-webhook"), func(p *notificationv1.Provider) { p.Spec.Channel = "#deploys" })
	b := testBridge(t, Options{Mode: ModeDirect, Reader: fakeReader(t, p,
		secret("slack-webhook", map[string]string{"address": s.URL + "/services/T000/B000/XXXX\n", "token": "xoxb-123"}))})
	if !deliverNow(b, withAlerts(testCanary(), alertFor("slack", "info")), promoted()) {
		t.Fatal("delivery failed")
	}
	r := onlyRequest(t, s.got())
	if r.path != "/services/T000/B000/XXXX" {
		t.Errorf("path = %q: the Secret's address (trimmed) must win", r.path)
	}
	if got := r.header.Get("Authorization"); got != "Bearer xoxb-123" {
		t.Errorf("Authorization = %q, want the Secret's token as bearer token", got)
	}
	want := compact(t, `{
		"channel": "#deploys", "username": "serin", "icon_url": "", "icon_emoji": "",
		"attachments": [{
			"fallback": "canary/podinfo.apps: Canary analysis completed successfully, promotion finished (revision `+testRevision+`)",
			"color": "good",
			"author_name": "canary/podinfo.apps",
			"text": "Canary analysis completed successfully, promotion finished (revision `+testRevision+`)",
			"mrkdwn_in": ["text"],
			"fields": `+slackFields("Succeeded", "0")+`
		}]
	}`)
	if diff := cmp.Diff(want, string(r.body)); diff != "" {
		t.Errorf("Slack payload (-want +got):\n%s", diff)
	}
}

func TestSlack_ErrorIsDanger(t *testing.T) {
	r := onlyRequest(t, postDirect(t, halted(), provider("slack", notificationv1.SlackProvider, func(p *notificationv1.Provider) { p.Spec.Username = "canaries" })))
	body := string(r.body)
	for _, s := range []string{`"username":"canaries"`, `"color":"danger"`, `"channel":""`} {
		if !strings.Contains(body, s) {
			t.Errorf("payload lacks %s:\n%s", s, body)
		}
	}
}

func TestSlack_PostMessageResponse(t *testing.T) {
	tests := map[string]struct {
		status  int
		body    string
		wantErr string
	}{
		"ok":      {status: 200, body: `{"ok": true}`},
		"refused": {status: 200, body: `{"ok": false, "error": "channel_not_found"}`, wantErr: "slack responded with error: channel_not_found"},
		"5xx":     {status: 503, body: `down`, wantErr: "status code 503"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			w := httptest.NewRecorder()
			w.WriteHeader(tt.status)
			_, _ = w.WriteString(tt.body)
			err := validateSlackResponse(w.Result())
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("validateSlackResponse() = %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestMSTeams_AdaptiveCard(t *testing.T) {
	r := onlyRequest(t, postDirect(t, halted(), provider("teams", notificationv1.MSTeamsProvider)))
	want := compact(t, `{
		"type": "message",
		"attachments": [{
			"contentType": "application/vnd.microsoft.card.adaptive",
			"content": {
				"$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
				"type": "AdaptiveCard",
				"version": "1.4",
				"body": [{
					"type": "Container",
					"items": [
						{"type": "TextBlock", "text": "canary/podinfo.apps", "size": "large", "weight": "bolder", "wrap": true},
						{"type": "TextBlock", "text": "promotion halted, routing frozen and canary kept serving: primary not ready", "color": "attention", "wrap": true},
						{"type": "FactSet", "facts": [
							{"title": "canary", "value": "apps/podinfo"},
							{"title": "phase", "value": "Halted"},
							{"title": "revision", "value": "`+testRevision+`"},
							{"title": "weight", "value": "50"}
						]}
					]
				}],
				"msteams": {"width": "Full"}
			}
		}]
	}`)
	if diff := cmp.Diff(want, string(r.body)); diff != "" {
		t.Errorf("Adaptive Card (-want +got):\n%s", diff)
	}
}

// TestMSTeams_MessageCard reaches the Office 365 connector address through
// the Provider's proxy (the sink), which also proves spec.proxy is honoured.
func TestMSTeams_MessageCard(t *testing.T) {
	proxy := newSink(t, nil)
	p := provider("teams", notificationv1.MSTeamsProvider, func(p *notificationv1.Provider) {
		p.Spec.Address = "http://contoso.webhook.office.com/webhookb2/1234/IncomingWebhook/abcd"
		p.Spec.Proxy = proxy.URL
	})
	b := testBridge(t, Options{Mode: ModeDirect, Reader: fakeReader(t, p)})
	if !deliverNow(b, withAlerts(testCanary(), alertFor("teams", "info")), promoted()) {
		t.Fatal("delivery failed")
	}
	r := onlyRequest(t, proxy.got())
	if r.host != "contoso.webhook.office.com" || r.path != "/webhookb2/1234/IncomingWebhook/abcd" {
		t.Errorf("proxied request to %s%s, want the connector address", r.host, r.path)
	}
	want := compact(t, `{
		"@type": "MessageCard",
		"@context": "http://schema.org/extensions",
		"themeColor": "0076D7",
		"summary": "canary/podinfo.apps",
		"sections": [{
			"activityTitle": "Canary analysis completed successfully, promotion finished (revision `+testRevision+`)",
			"activitySubtitle": "canary/podinfo.apps",
			"facts": [
				{"name": "canary", "value": "apps/podinfo"},
				{"name": "phase", "value": "Succeeded"},
				{"name": "revision", "value": "`+testRevision+`"},
				{"name": "weight", "value": "0"}
			]
		}]
	}`)
	if diff := cmp.Diff(want, string(r.body)); diff != "" {
		t.Errorf("MessageCard (-want +got):\n%s", diff)
	}
}

func TestDiscord(t *testing.T) {
	s := newSink(t, nil)
	p := provider("discord", notificationv1.DiscordProvider, func(p *notificationv1.Provider) {
		p.Spec.Address = s.URL + "/api/webhooks/1234/token"
	})
	b := testBridge(t, Options{Mode: ModeDirect, Reader: fakeReader(t, p)})
	if !deliverNow(b, withAlerts(testCanary(), alertFor("discord", "info")), halted()) {
		t.Fatal("delivery failed")
	}
	r := onlyRequest(t, s.got())
	if r.path != "/api/webhooks/1234/token/slack" {
		t.Errorf("path = %q, want Discord's Slack-compatible endpoint .../slack", r.path)
	}
	want := compact(t, `{
		"channel": "", "username": "serin", "icon_url": "", "icon_emoji": "",
		"attachments": [{
			"fallback": "",
			"color": "danger",
			"author_name": "canary/podinfo.apps",
			"text": "promotion halted, routing frozen and canary kept serving: primary not ready",
			"mrkdwn_in": ["text"],
			"fields": `+slackFields("Halted", "50")+`
		}]
	}`)
	if diff := cmp.Diff(want, string(r.body)); diff != "" {
		t.Errorf("Discord payload (-want +got):\n%s", diff)
	}
}

func TestGoogleChat(t *testing.T) {
	r := onlyRequest(t, postDirect(t, halted(), provider("gchat", notificationv1.GoogleChatProvider)))
	// encoding/json escapes < and >, as notification-controller's does.
	want := compact(t, `{"cards": [{
		"header": {"title": "canary/podinfo.apps", "subtitle": "serin", "imageUrl": null, "imageStyle": null},
		"sections": [
			{"header": "", "widgets": [
				{"textParagraph": {"text": "\u003cfont color=\"#ff0000\"\u003epromotion halted, routing frozen and canary kept serving: primary not ready\u003c/font\u003e"}, "keyValue": null}
			]},
			{"header": "", "widgets": [
				{"textParagraph": null, "keyValue": {"topLabel": "canary", "content": "apps/podinfo", "contentMultiline": false, "bottomLabel": null, "icon": null}},
				{"textParagraph": null, "keyValue": {"topLabel": "phase", "content": "Halted", "contentMultiline": false, "bottomLabel": null, "icon": null}},
				{"textParagraph": null, "keyValue": {"topLabel": "revision", "content": "`+testRevision+`", "contentMultiline": false, "bottomLabel": null, "icon": null}},
				{"textParagraph": null, "keyValue": {"topLabel": "weight", "content": "50", "contentMultiline": false, "bottomLabel": null, "icon": null}}
			]}
		]
	}]}`)
	if diff := cmp.Diff(want, string(r.body)); diff != "" {
		t.Errorf("Google Chat payload (-want +got):\n%s", diff)
	}
}

func TestRocket(t *testing.T) {
	r := onlyRequest(t, postDirect(t, promoted(), provider("rocket", notificationv1.RocketProvider, func(p *notificationv1.Provider) {
		p.Spec.Channel = "deploys"
		p.Spec.Username = "serin-bot"
	})))
	want := compact(t, `{
		"channel": "deploys", "username": "serin-bot", "icon_url": "", "icon_emoji": "",
		"attachments": [{
			"fallback": "",
			"color": "#0076D7",
			"author_name": "canary/podinfo.apps",
			"text": "Canary analysis completed successfully, promotion finished (revision `+testRevision+`)",
			"mrkdwn_in": ["text"],
			"fields": `+slackFields("Succeeded", "0")+`
		}]
	}`)
	if diff := cmp.Diff(want, string(r.body)); diff != "" {
		t.Errorf("Rocket.Chat payload (-want +got):\n%s", diff)
	}
}

// wantGenericEvent is the Flux event JSON a generic Provider receives for
// promoted(): about the Canary, metadata without prefix and without token.
const wantGenericEvent = `{
	"involvedObject": {"kind": "Canary", "namespace": "apps", "name": "podinfo", "uid": "9a1c0b6e-0000-4000-8000-000000000001", "apiVersion": "serin.dev/v1alpha1"},
	"severity": "info",
	"timestamp": "2026-11-21T10:00:00Z",
	"message": "Canary analysis completed successfully, promotion finished (revision ` + testRevision + `)",
	"reason": "Succeeded",
	"metadata": {"canary": "apps/podinfo", "phase": "Succeeded", "revision": "` + testRevision + `", "weight": "0"},
	"reportingController": "serin",
	"reportingInstance": "serin-agent-0"
}`

func TestGeneric(t *testing.T) {
	r := onlyRequest(t, postDirect(t, promoted(), provider("generic", notificationv1.GenericProvider, withSecret("headers")),
		secret("headers", map[string]string{"headers": "X-Team: payments\nAuthorization: Bearer s3cr3t\n"})))
	if diff := cmp.Diff(compact(t, wantGenericEvent), string(r.body)); diff != "" {
		t.Errorf("generic payload (-want +got):\n%s", diff)
	}
	for k, v := range map[string]string{"Gotk-Component": "serin", "X-Team": "payments", "Authorization": "Bearer s3cr3t"} {
		if got := r.header.Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	if r.header.Get("X-Signature") != "" {
		t.Error("generic (not hmac) request is signed")
	}
}

func TestGenericHMAC(t *testing.T) {
	const key = "hmac-key-from-the-secret"
	s := newSink(t, nil)
	p := provider("signed", notificationv1.GenericHMACProvider, withSecret("hmac"))
	b := testBridge(t, Options{Mode: ModeDirect, Reader: fakeReader(t, p,
		secret("hmac", map[string]string{"address": s.URL + "/receiver", "token": key}))})
	if !deliverNow(b, withAlerts(testCanary(), alertFor("signed", "info")), promoted()) {
		t.Fatal("delivery failed")
	}
	r := onlyRequest(t, s.got())
	if diff := cmp.Diff(compact(t, wantGenericEvent), string(r.body)); diff != "" {
		t.Errorf("generic-hmac payload (-want +got):\n%s", diff)
	}
	// Verify as a receiver would: HMAC-SHA256 of the raw body with the shared key.
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write(r.body)
	want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
	if got := r.header.Get("X-Signature"); got != want {
		t.Errorf("X-Signature = %q, want %q", got, want)
	}
	if got := r.header.Get("Gotk-Component"); got != "serin" {
		t.Errorf("gotk-component = %q", got)
	}
}

func TestGenericHMAC_NoToken(t *testing.T) {
	s := newSink(t, nil)
	p := provider("signed", notificationv1.GenericHMACProvider, func(p *notificationv1.Provider) { p.Spec.Address = s.URL })
	b := testBridge(t, Options{Mode: ModeDirect, Reader: fakeReader(t, p)})
	if deliverNow(b, withAlerts(testCanary(), alertFor("signed", "info")), promoted()) {
		t.Error("delivery without an HMAC key succeeded")
	}
	if n := len(s.got()); n != 0 {
		t.Errorf("sink received %d unsigned requests", n)
	}
}

func TestSign(t *testing.T) {
	// RFC 4231 test case 2.
	got := Sign([]byte("what do ya want for nothing?"), []byte("Jefe"))
	if want := "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"; got != want {
		t.Errorf("Sign() = %s, want %s", got, want)
	}
}

func TestDiscordAddress(t *testing.T) {
	tests := map[string]string{
		"https://discord.com/api/webhooks/1/abc":       "https://discord.com/api/webhooks/1/abc/slack",
		"https://discord.com/api/webhooks/1/abc/slack": "https://discord.com/api/webhooks/1/abc/slack",
	}
	for in, want := range tests {
		req, err := discordRequest(providerConfig{address: in}, promotedProviderEvent())
		if err != nil {
			t.Fatal(err)
		}
		if req.url != want {
			t.Errorf("discord address %s → %s, want %s", in, req.url, want)
		}
	}
}

func promotedProviderEvent() eventv1.Event {
	return eventFields{canary: testCanary(), event: promoted(), revision: testRevision, at: testTime}.providerEvent("serin", "x")
}

// TestProviderCA: a Provider on HTTPS with a private CA is reached only
// when the CA is given, in spec.certSecretRef (ca.crt, or the legacy
// caFile) or in the Provider's Secret.
func TestProviderCA(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) }))
	t.Cleanup(srv.Close)
	ca := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	tests := map[string]struct {
		provider *notificationv1.Provider
		secrets  []client.Object
		ok       bool
	}{
		"no CA": {provider: provider("p", "generic", func(p *notificationv1.Provider) { p.Spec.Address = srv.URL })},
		"certSecretRef ca.crt": {
			provider: provider("p", "generic", func(p *notificationv1.Provider) {
				p.Spec.Address = srv.URL
				p.Spec.CertSecretRef = &meta.LocalObjectReference{Name: "tls"}
			}),
			secrets: []client.Object{secret("tls", map[string]string{"ca.crt": ca})}, ok: true,
		},
		"certSecretRef caFile": {
			provider: provider("p", "generic", func(p *notificationv1.Provider) {
				p.Spec.Address = srv.URL
				p.Spec.CertSecretRef = &meta.LocalObjectReference{Name: "tls"}
			}),
			secrets: []client.Object{secret("tls", map[string]string{"caFile": ca})}, ok: true,
		},
		"ca.crt in the Provider's Secret": {
			provider: provider("p", "generic", withSecret("auth")),
			secrets:  []client.Object{secret("auth", map[string]string{"address": srv.URL, "ca.crt": ca})}, ok: true,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			b := testBridge(t, Options{Mode: ModeDirect, Reader: fakeReader(t, append(tt.secrets, tt.provider)...)})
			if got := deliverNow(b, withAlerts(testCanary(), alertFor("p", "info")), promoted()); got != tt.ok {
				t.Errorf("delivered = %v, want %v", got, tt.ok)
			}
		})
	}
}

// TestProviderErrorsHideSecrets: a failed delivery is logged without the
// webhook address, which is itself a credential.
func TestProviderErrorsHideSecrets(t *testing.T) {
	s := newSink(t, func(int) int { return http.StatusForbidden })
	address := s.URL + "/services/T000/B000/very-secret"
	p := provider("slack", notificationv1.SlackProvider, func(p *notificationv1.Provider) { p.Spec.Address = address })
	b := testBridge(t, Options{Mode: ModeDirect, Reader: fakeReader(t, p)})
	err := b.sendToProvider(context.Background(), testCanary(), types.NamespacedName{Namespace: "flux-system", Name: "slack"},
		eventFields{canary: testCanary(), event: promoted(), at: testTime}.providerEvent("serin", "x"), anyProvider)
	if err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("sendToProvider() = %v, want a 403 error", err)
	}
	if strings.Contains(err.Error(), "very-secret") {
		t.Errorf("error reveals the webhook address: %v", err)
	}
}
