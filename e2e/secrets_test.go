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

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/gitops"
	"github.com/serin-dev/serin/internal/testing/testbed"
)

// plantedSecrets are credentials a rollout uses, each in a place a tenant
// puts credentials: a webhook URL's userinfo and query, a MetricTemplate's
// Secret, a Provider's Secret (address and token), a webhook signing key,
// and the Git token of the GitRepository's Secret.
var plantedSecrets = []string{
	"Pl4ntedHookPass", "Pl4ntedHookToken", "Pl4ntedPromPass", "Pl4ntedProviderToken",
	"Pl4ntedProviderBearer", "Pl4ntedSigningKey",
}

// secretsApp is podinfoApp whose Canary calls a webhook with credentials in
// its URL (failing its first call, so that the failure is reported), signs
// it, queries a MetricTemplate with basic auth, and alerts a Provider
// that always fails (so that delivery errors are logged).
func secretsApp(ns, tag, hook string) map[string]string {
	files := podinfoApp(ns, tag, v1alpha1.PullRequestRevert)
	canary := files["apps/podinfo/canary.yaml"]
	canary = strings.Replace(canary, "    iterations: 1\n", fmt.Sprintf(`    iterations: 2
    threshold: 3
    metrics:
      - name: authenticated
        templateRef:
          name: authenticated
        thresholdRange:
          max: 1
    webhooks:
      - name: gate
        type: rollout
        url: %s
        signingSecretRef:
          name: hook-key
`, hook), 1)
	files["apps/podinfo/canary.yaml"] = strings.Replace(canary, "  gitops:\n", `  alerts:
    - providerRef:
        name: alerts
  gitops:
`, 1)
	return files
}

// A full rollout, a halted promotion and its revert pull request, with
// credentials in every place a tenant puts them: none of them is found in
// the agent's log, the namespace's events, the Canary's status or the pull
// requests, while the redacted forms are.
func TestSecrets_NeverReflected(t *testing.T) {
	shared(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)

	var hookCalls atomic.Int32
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Serin-Signature-256") == "" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if hookCalls.Add(1) == 1 {
			http.Error(w, "not yet", http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(hook.Close)
	hookURL := strings.Replace(hook.URL, "http://", "http://tenant:Pl4ntedHookPass@", 1) + "/gate?token=Pl4ntedHookToken"
	var alerts atomic.Int32
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		alerts.Add(1)
		w.WriteHeader(http.StatusInternalServerError)
	}))
	t.Cleanup(provider.Close)

	for _, s := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Name: "hook-key", Namespace: ns}, StringData: map[string]string{"token": "Pl4ntedSigningKey"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "prometheus", Namespace: ns}, StringData: map[string]string{"username": "tenant", "password": "Pl4ntedPromPass"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "alerts", Namespace: ns}, StringData: map[string]string{
			"address": provider.URL + "/hooks/Pl4ntedProviderToken?token=Pl4ntedProviderToken", "token": "Pl4ntedProviderBearer"}},
	} {
		g.Expect(k8s.Create(ctx, s)).To(Succeed())
	}
	g.Expect(k8s.Create(ctx, &v1alpha1.MetricTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "authenticated", Namespace: ns},
		Spec: v1alpha1.MetricTemplateSpec{
			Provider: v1alpha1.MetricProvider{Address: prom.URL, SecretRef: &meta.LocalObjectReference{Name: "prometheus"}},
			Query:    "vector(0)",
		},
	})).To(Succeed())
	g.Expect(k8s.Create(ctx, fluxObject("notification.toolkit.fluxcd.io/v1beta3", "Provider", ns, "alerts",
		map[string]any{"type": "generic", "secretRef": map[string]any{"name": "alerts"}}))).To(Succeed())

	f := newFleet(t, g, ns, secretsApp(ns, "v1", hookURL))
	first, err := f.repo.Reference("refs/heads/main", true)
	g.Expect(err).NotTo(HaveOccurred())
	f.sync(g, first.Hash().String())
	canary := &v1alpha1.Canary{ObjectMeta: metav1.ObjectMeta{Name: "podinfo", Namespace: ns}}
	waitForPhase(g, canary, v1alpha1.PhaseInitialized, 60*time.Second)

	good := f.push(secretsApp(ns, "v2", hookURL), "Release podinfo v2")
	f.sync(g, good)
	waitForPhase(g, canary, v1alpha1.PhaseSucceeded, 90*time.Second)
	bad := f.push(map[string]string{
		"apps/podinfo/kustomization.yaml": secretsApp(ns, "v3", hookURL)["apps/podinfo/kustomization.yaml"],
		"apps/podinfo/deployment.yaml":    podinfoDeployment("\n      annotations:\n        " + testbed.NeverReadyAsPrimaryAnnotation + `: "true"`),
	}, "Release podinfo v3")
	f.sync(g, bad)
	waitForPhase(g, canary, v1alpha1.PhaseHalted, 90*time.Second)
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(canary), canary)).To(Succeed())
		g.Expect(canary.Status.Revert).NotTo(BeNil())
		g.Expect(canary.Status.Revert.State).To(Equal(gitops.StateOpened), "revert: %+v", canary.Status.Revert)
	}, 60*time.Second, 200*time.Millisecond).Should(Succeed())
	g.Expect(hookCalls.Load()).To(BeNumerically(">", 1), "the webhook's failure and success")
	g.Eventually(alerts.Load, 30*time.Second, 200*time.Millisecond).Should(BeNumerically(">", 0), "the Provider was called")

	// Where a person or a tool reads what serin says.
	places := map[string]string{}
	status, err := json.Marshal(canary.Status)
	g.Expect(err).NotTo(HaveOccurred())
	places["status"] = string(status)
	var events corev1.EventList
	g.Expect(k8s.List(ctx, &events, client.InNamespace(ns))).To(Succeed())
	var lines []string
	for _, e := range events.Items {
		lines = append(lines, e.Reason+": "+e.Message)
	}
	places["events"] = strings.Join(lines, "\n")
	var prs []struct {
		Title string `json:"title"`
		Body  string `json:"body"`
	}
	g.Expect(gitea.API(ctx, "GET", fmt.Sprintf("/repos/%s/%s/pulls?state=all", gitea.User, f.name), nil, &prs)).To(Succeed())
	g.Expect(prs).To(HaveLen(1))
	places["pull request"] = prs[0].Title + "\n" + prs[0].Body
	log, err := os.ReadFile(filepath.Join(env.Dir, "serin-agent.log"))
	g.Expect(err).NotTo(HaveOccurred())
	places["agent log"] = string(log)

	for place, text := range places {
		for _, secret := range append(plantedSecrets, gitea.Token) {
			if strings.Contains(text, secret) {
				i := strings.Index(text, secret)
				t.Errorf("%s holds the planted secret %q: …%s…", place, secret, text[max(0, i-200):min(len(text), i+len(secret)+50)])
			}
		}
	}
	// The failures were reported, with the webhook's address redacted.
	g.Expect(places["events"] + places["agent log"]).To(ContainSubstring("redacted"))
	t.Logf("events:\n%s\npull request:\n%s", places["events"], places["pull request"])
}
