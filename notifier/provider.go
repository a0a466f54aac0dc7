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
	"context"
	"fmt"
	"net/url"
	"strings"

	notificationv1 "github.com/fluxcd/notification-controller/api/v1beta3"
	"github.com/fluxcd/pkg/runtime/secrets"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/serin-dev/serin/internal/outbound"
)

// maxAddressLength is notification-controller's limit on an address.
const maxAddressLength = 2048

// resolveProvider builds the configuration notification-controller would
// build for a Provider: the address (spec.address, or the Secret's
// address key), channel and username, the Secret's token, headers (a YAML
// map) and basic-auth username, the proxy (spec.proxy, the Secret's proxy
// key, or spec.proxySecretRef, the last one set winning) and the TLS
// settings of spec.certSecretRef (ca.crt or the legacy caFile, with
// tls.crt/tls.key for client certificates). Without certSecretRef, a
// ca.crt in the Provider's Secret is trusted too.
func resolveProvider(ctx context.Context, r client.Reader, p *notificationv1.Provider) (providerConfig, error) {
	cfg := providerConfig{
		typ:      p.Spec.Type,
		address:  p.Spec.Address,
		channel:  p.Spec.Channel,
		username: p.Spec.Username,
	}
	if p.Spec.Proxy != "" {
		u, err := url.Parse(p.Spec.Proxy)
		if err != nil {
			return cfg, fmt.Errorf("invalid spec.proxy: %w", outbound.RedactError(outbound.WithoutURL(err)))
		}
		cfg.endpoint.proxy = u
	}

	var secretTLS *corev1.Secret
	if ref := p.Spec.SecretRef; ref != nil {
		s, err := getSecret(ctx, r, p.Namespace, ref.Name)
		if err != nil {
			return cfg, err
		}
		if err := cfg.applySecret(ctx, s); err != nil {
			return cfg, err
		}
		secretTLS = s
	}
	if ref := p.Spec.ProxySecretRef; ref != nil {
		s, err := getSecret(ctx, r, p.Namespace, ref.Name)
		if err != nil {
			return cfg, err
		}
		u, err := secrets.ProxyURLFromSecret(ctx, s)
		if err != nil {
			return cfg, fmt.Errorf("failed to read the proxy: %w", outbound.RedactError(outbound.WithoutURL(err)))
		}
		cfg.endpoint.proxy = u
	}
	if ref := p.Spec.CertSecretRef; ref != nil {
		s, err := getSecret(ctx, r, p.Namespace, ref.Name)
		if err != nil {
			return cfg, err
		}
		tlsConfig, err := secrets.TLSConfigFromSecret(ctx, s)
		if err != nil {
			return cfg, fmt.Errorf("failed to read the TLS settings: %w", err)
		}
		cfg.endpoint.tls = tlsConfig
	} else if secretTLS != nil && hasCA(secretTLS) {
		tlsConfig, err := secrets.TLSConfigFromSecret(ctx, secretTLS)
		if err != nil {
			return cfg, fmt.Errorf("failed to read the TLS settings: %w", err)
		}
		cfg.endpoint.tls = tlsConfig
	}

	if cfg.address == "" {
		return cfg, fmt.Errorf("provider %s/%s has no address (spec.address or the Secret's address key)", p.Namespace, p.Name)
	}
	if _, err := url.ParseRequestURI(cfg.address); err != nil {
		return cfg, fmt.Errorf("provider %s/%s has an invalid address", p.Namespace, p.Name)
	}
	return cfg, nil
}

// applySecret reads the Provider Secret's address, proxy, headers, token
// and basic-auth username.
func (cfg *providerConfig) applySecret(ctx context.Context, s *corev1.Secret) error {
	if v, ok := s.Data["address"]; ok {
		if len(v) > maxAddressLength {
			return fmt.Errorf("invalid address in secret %s/%s: longer than %d bytes", s.Namespace, s.Name, maxAddressLength)
		}
		cfg.address = strings.TrimSpace(string(v))
	}
	if v, ok := s.Data["proxy"]; ok {
		u, err := url.Parse(strings.TrimSpace(string(v)))
		if err != nil {
			return fmt.Errorf("invalid proxy in secret %s/%s", s.Namespace, s.Name)
		}
		cfg.endpoint.proxy = u
	}
	if v, ok := s.Data["headers"]; ok {
		headers := map[string]string{}
		if err := yaml.Unmarshal(v, &headers); err != nil {
			return fmt.Errorf("failed to read headers from secret %s/%s: %w", s.Namespace, s.Name, err)
		}
		cfg.headers = headers
	}
	// Like notification-controller, ignore a Secret whose auth keys are
	// malformed: the address alone may be enough.
	if auth, err := secrets.AuthMethodsFromSecret(ctx, s); err == nil && auth != nil {
		if auth.HasTokenAuth() {
			cfg.token = strings.TrimSpace(string(auth.Token))
		}
		if auth.HasBasicAuth() {
			cfg.username = auth.Basic.Username
		}
	}
	return nil
}

func hasCA(s *corev1.Secret) bool {
	_, ca := s.Data[secrets.KeyCACert]
	_, legacy := s.Data[secrets.LegacyKeyCACert]
	return ca || legacy
}

func getSecret(ctx context.Context, r client.Reader, namespace, name string) (*corev1.Secret, error) {
	s := &corev1.Secret{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, s); err != nil {
		return nil, fmt.Errorf("failed to get secret %s/%s: %w", namespace, name, err)
	}
	return s, nil
}
