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
// returns nil on a 2xx answer.
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
	for attempt := 0; attempt <= hook.Retries; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Duration(attempt) * 200 * time.Millisecond):
			}
		}
		if last = w.post(ctx, hook.URL, body, timeout); last == nil {
			return nil
		}
	}
	return fmt.Errorf("webhook %s: %w", hook.Name, last)
}

func (w *Webhooks) post(ctx context.Context, url string, body []byte, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
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

// Gate calls every webhook of a gate type and reports whether all are open
// (2xx); closed names the first that is not.
func (w *Webhooks) Gate(ctx context.Context, canary *v1alpha1.Canary, t v1alpha1.HookType) (open bool, closed string) {
	for _, h := range Hooks(canary, t) {
		if err := w.Call(ctx, canary, h, canary.Status.Phase); err != nil {
			return false, err.Error()
		}
	}
	return true, ""
}

// Run calls every webhook of a type and returns the first failure.
func (w *Webhooks) Run(ctx context.Context, canary *v1alpha1.Canary, t v1alpha1.HookType) error {
	for _, h := range Hooks(canary, t) {
		if err := w.Call(ctx, canary, h, canary.Status.Phase); err != nil {
			return err
		}
	}
	return nil
}

// RollbackRequested reports whether a rollback webhook answered 2xx.
func (w *Webhooks) RollbackRequested(ctx context.Context, canary *v1alpha1.Canary) (bool, string) {
	for _, h := range Hooks(canary, v1alpha1.RollbackHook) {
		if err := w.Call(ctx, canary, h, canary.Status.Phase); err == nil {
			return true, h.Name
		}
	}
	return false, ""
}
