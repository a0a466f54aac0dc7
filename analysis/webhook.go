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

package analysis

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/outbound"
	"github.com/serin-dev/serin/internal/tenancy"
)

// DefaultWebhookTimeout bounds one webhook call when the webhook sets none.
const DefaultWebhookTimeout = 10 * time.Second

// The headers of a signed webhook call (signingSecretRef): the time of the
// call in Unix seconds, and sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">
// keyed with the Secret's token. docs/security.md#signed-webhooks shows how
// a receiver checks them.
const (
	WebhookTimestampHeader = "X-Serin-Timestamp"
	WebhookSignatureHeader = "X-Serin-Signature-256"
)

// maxWebhookAnswer is how much of a failed call's answer is read, for its
// excerpt.
const maxWebhookAnswer = 1 << 10

// Payload is the JSON body POSTed to webhooks, Flagger's CanaryWebhookPayload.
type Payload struct {
	Name      string            `json:"name"`
	Namespace string            `json:"namespace"`
	Phase     string            `json:"phase"`
	Checksum  string            `json:"checksum"`
	Type      string            `json:"type,omitempty"`
	Metadata  map[string]string `json:"metadata,omitempty"`
}

// Webhooks calls a Canary's webhooks.
type Webhooks struct {
	// Client is the HTTP client; nil is outbound's policy (no redirects).
	// Each call is bounded by its webhook's timeout.
	Client *http.Client
	// Tenancy reads the signing Secrets on the Canary's behalf; without
	// it, a webhook with a signingSecretRef fails.
	Tenancy *tenancy.Tenancy
	// Now is the clock of the signatures' timestamps; nil is time.Now.
	Now func() time.Time
}

// defaultWebhookClient is the client of Webhooks without one: shared, so
// that connections are reused.
var defaultWebhookClient = sync.OnceValue(func() *http.Client { return outbound.NewClient(outbound.Options{}) })

// Call POSTs the payload to one webhook, with its timeout and retries, and
// returns nil on a 2xx answer. A call that gets no answer in time fails with
// a *DeadlineError: the webhook's own timeout, or the deadline of ctx (the
// analysis step's) when that comes first. Errors name the URL redacted and
// quote at most an excerpt of the answer.
func (w *Webhooks) Call(ctx context.Context, canary *v1alpha1.Canary, hook v1alpha1.CanaryWebhook, phase v1alpha1.CanaryPhase) error {
	payload := Payload{
		Name:      canary.Name,
		Namespace: canary.Namespace,
		Phase:     string(phase),
		Checksum:  canary.Status.LastAppliedSpec,
		Type:      string(hook.Type),
		Metadata:  hook.Metadata,
	}
	body, err := json.Marshal(payload)
	if err != nil {
		return err
	}
	key, err := w.signingKey(ctx, canary, hook)
	if err != nil {
		return fmt.Errorf("webhook %s: %w", hook.Name, err)
	}
	timeout := DefaultWebhookTimeout
	if hook.Timeout != nil && hook.Timeout.Duration > 0 {
		timeout = hook.Timeout.Duration
	}
	var last error
	for attempt := 0; attempt <= hook.Retries && ctx.Err() == nil; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(time.Duration(attempt) * 200 * time.Millisecond):
			}
		}
		if last = w.post(ctx, hook.URL, body, key, timeout); last == nil {
			return nil
		}
		if outbound.IsRedirect(last) {
			break
		}
	}
	if cause := context.Cause(ctx); cause != nil {
		last = cause
	}
	return fmt.Errorf("webhook %s: %w", hook.Name, last)
}

// signingKey reads the token of a webhook's signingSecretRef, as the
// Canary's service account; nil when the webhook is not signed.
func (w *Webhooks) signingKey(ctx context.Context, canary *v1alpha1.Canary, hook v1alpha1.CanaryWebhook) ([]byte, error) {
	ref := hook.SigningSecretRef
	if ref == nil {
		return nil, nil
	}
	key := types.NamespacedName{Namespace: canary.Namespace, Name: ref.Name}
	reader, err := w.Tenancy.SecretReader(canary)
	if err != nil {
		return nil, fmt.Errorf("cannot read the signing Secret %s (signingSecretRef): %w", key, err)
	}
	secret := &corev1.Secret{}
	if err := reader.Get(ctx, key, secret); err != nil {
		return nil, fmt.Errorf("failed to get the signing Secret %s (signingSecretRef): %w", key, w.Tenancy.AccessError(canary, err))
	}
	token := bytes.TrimSpace(secret.Data["token"])
	if len(token) == 0 {
		return nil, fmt.Errorf("the signing Secret %s (signingSecretRef) has no 'token' key, or it is empty", key)
	}
	return token, nil
}

func (w *Webhooks) post(ctx context.Context, url string, body, key []byte, timeout time.Duration) error {
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, &DeadlineError{Of: "call", After: timeout})
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("invalid URL %s", outbound.Redact(url))
	}
	req.Header.Set("Content-Type", "application/json")
	if key != nil {
		timestamp := strconv.FormatInt(w.now().Unix(), 10)
		req.Header.Set(WebhookTimestampHeader, timestamp)
		req.Header.Set(WebhookSignatureHeader, "sha256="+SignWebhook(key, timestamp, body))
	}
	client := w.Client
	if client == nil {
		client = defaultWebhookClient()
	}
	resp, err := client.Do(req)
	if err != nil {
		if cause := context.Cause(ctx); cause != nil {
			return cause
		}
		return outbound.RequestError(url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		answer, _ := outbound.ReadAtMost(resp.Body, maxWebhookAnswer)
		return answerError(url, resp.StatusCode, answer)
	}
	return nil
}

func (w *Webhooks) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

// SignWebhook returns the hex HMAC-SHA256, keyed with key, of
// "<timestamp>.<body>": the signature of X-Serin-Signature-256.
func SignWebhook(key []byte, timestamp string, body []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(timestamp))
	mac.Write([]byte("."))
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

// answerError names the URL redacted, the status and an excerpt of the
// answer of a call that failed.
func answerError(url string, status int, answer []byte) error {
	msg := fmt.Sprintf("%s answered %d", outbound.Redact(url), status)
	if excerpt := outbound.Excerpt(answer); excerpt != "" {
		msg += fmt.Sprintf(": %q", excerpt)
	}
	return errors.New(msg)
}

// Hooks returns the Canary's webhooks of one type.
func Hooks(canary *v1alpha1.Canary, t v1alpha1.HookType) []v1alpha1.CanaryWebhook {
	if canary.Spec.Analysis == nil {
		return nil
	}
	var out []v1alpha1.CanaryWebhook
	for _, h := range canary.Spec.Analysis.Webhooks {
		ht := h.Type
		if ht == "" {
			ht = v1alpha1.RolloutHook
		}
		if ht == t {
			out = append(out, h)
		}
	}
	return out
}
