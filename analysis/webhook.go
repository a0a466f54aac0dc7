package analysis

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// DefaultWebhookTimeout bounds one webhook call when the webhook sets none.
const DefaultWebhookTimeout = 10 * time.Second

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
	// Client is the HTTP client; its timeout is overridden per call.
	Client *http.Client
}

// Call POSTs the payload to one webhook, with its timeout and retries, and
// returns nil on a 2xx answer. A call that gets no answer in time fails with
// a *DeadlineError: the webhook's own timeout, or the deadline of ctx (the
// analysis step's) when that comes first.
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
		if last = w.post(ctx, hook.URL, body, timeout); last == nil {
			return nil
		}
	}
	if cause := context.Cause(ctx); cause != nil {
		last = cause
	}
	return fmt.Errorf("webhook %s: %w", hook.Name, last)
}

func (w *Webhooks) post(ctx context.Context, url string, body []byte, timeout time.Duration) error {
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, &DeadlineError{Of: "call", After: timeout})
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	client := w.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		if cause := context.Cause(ctx); cause != nil {
			return cause
		}
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("%s answered %d %s", url, resp.StatusCode, bytes.TrimSpace(msg))
	}
	return nil
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
