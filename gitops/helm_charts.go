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

package gitops

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/serin-dev/serin/internal/outbound"
)

const (
	// DefaultMaxChartSize bounds a packaged chart serin downloads.
	DefaultMaxChartSize int64 = 10 << 20
	// maxIndexSize bounds a Helm repository's index.yaml.
	maxIndexSize int64 = 32 << 20
	// chartFetchTimeout bounds each request to a Helm repository.
	chartFetchTimeout = 30 * time.Second
)

// HelmCharts downloads the charts of HTTP Helm repositories (a
// HelmRepository of type default, http:// or https://), for a revert or a
// wave verified by rendering. The HelmRepository and its Secret are read
// with the client. Credentials (the Secret's username and password) are
// sent only to the repository's own host: never to a chart URL or a
// redirect on another host. Packages are kept in memory by URL and
// digest.
type HelmCharts struct {
	client         client.Reader
	http           *http.Client
	maxSize        int64
	crossNamespace bool

	mu       sync.Mutex
	packages map[string][]byte
	// cached is the size of packages, at most maxCachedPackages.
	cached int64
	// resolved remembers where an index put a chart's version, for
	// indexResolveTTL: a plan renders the chart at several commits, and a
	// 32 MiB index is read once for them.
	resolved map[string]resolvedChart
}

// resolvedChart is a chart version's package URL and digest, as an index
// gave them at a time.
type resolvedChart struct {
	url    *url.URL
	digest string
	at     time.Time
}

const (
	// maxCachedPackages bounds the packages kept in memory, in bytes:
	// past it the cache starts again, so that many tenants' charts never
	// grow the agent.
	maxCachedPackages int64 = 64 << 20
	// indexResolveTTL is how long a resolved chart version is trusted
	// without reading the index again.
	indexResolveTTL = time.Minute
)

// NewHelmCharts returns HelmCharts reading objects with c. With
// crossNamespace false, a HelmRepository must be in the HelmRelease's
// namespace.
func NewHelmCharts(c client.Reader, crossNamespace bool) *HelmCharts {
	return &HelmCharts{client: c, http: outbound.NewClient(outbound.Options{Timeout: chartFetchTimeout}), maxSize: DefaultMaxChartSize, crossNamespace: crossNamespace, packages: map[string][]byte{}, resolved: map[string]resolvedChart{}}
}

// repositoryAuth is a HelmRepository's address and basic auth.
type repositoryAuth struct {
	base               *url.URL
	username, password string
}

// HelmRepositoryChart implements ChartSource.
func (h *HelmCharts) HelmRepositoryChart(ctx context.Context, namespace string, ref types.NamespacedName, name, version string) ([]byte, error) {
	if !h.crossNamespace && ref.Namespace != namespace {
		return nil, notRendered("HelmRepository %s is in another namespace, and cross-namespace references are disabled", ref)
	}
	repo := &sourcev1.HelmRepository{}
	if err := getTyped(ctx, h.client, sourcev1.GroupVersion.WithKind(sourcev1.HelmRepositoryKind), ref, repo); err != nil {
		return nil, fmt.Errorf("failed to get HelmRepository %s: %w", ref, err)
	}
	auth, err := h.repositoryAuth(ctx, repo)
	if err != nil {
		return nil, err
	}
	return h.fetch(ctx, auth, name, version)
}

// repositoryAuth reads where a HelmRepository is and its credentials.
func (h *HelmCharts) repositoryAuth(ctx context.Context, repo *sourcev1.HelmRepository) (*repositoryAuth, error) {
	key := types.NamespacedName{Namespace: repo.Namespace, Name: repo.Name}
	switch {
	case repo.Spec.Type == sourcev1.HelmRepositoryTypeOCI:
		return nil, notRendered("HelmRepository %s is an OCI registry, which serin does not fetch charts from", key)
	case repo.Spec.CertSecretRef != nil:
		return nil, notRendered("HelmRepository %s needs TLS client settings (certSecretRef), which serin does not use", key)
	}
	u, err := url.Parse(repo.Spec.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, notRendered("HelmRepository %s: URL %q is not http:// or https://", key, repo.Spec.URL)
	}
	auth := &repositoryAuth{base: u}
	if repo.Spec.SecretRef == nil {
		return auth, nil
	}
	secret := &corev1.Secret{}
	if err := h.client.Get(ctx, types.NamespacedName{Namespace: repo.Namespace, Name: repo.Spec.SecretRef.Name}, secret); err != nil {
		return nil, fmt.Errorf("failed to get the Secret of HelmRepository %s: %w", key, err)
	}
	auth.username, auth.password = string(secret.Data["username"]), string(secret.Data["password"])
	if auth.username == "" || auth.password == "" {
		return nil, notRendered("the Secret of HelmRepository %s has no username and password, the only credentials serin sends", key)
	}
	return auth, nil
}

// indexFile is what serin reads of a repository's index.yaml.
type indexFile struct {
	Entries map[string][]struct {
		Version string   `json:"version"`
		Digest  string   `json:"digest"`
		URLs    []string `json:"urls"`
	} `json:"entries"`
}

// fetch finds name at version in the repository's index and downloads
// its package, checking its digest when the index gives one; packages
// with a digest are kept in memory.
func (h *HelmCharts) fetch(ctx context.Context, auth *repositoryAuth, name, version string) ([]byte, error) {
	u, digest, err := h.resolve(ctx, auth, name, version)
	if err != nil {
		return nil, err
	}
	id := u.String() + "@" + digest
	h.mu.Lock()
	tgz, ok := h.packages[id]
	h.mu.Unlock()
	if ok && digest != "" {
		return tgz, nil
	}
	if tgz, err = h.get(ctx, auth, u, h.maxSize); err != nil {
		return nil, err
	}
	if digest == "" {
		return tgz, nil
	}
	sum := sha256.Sum256(tgz)
	if hex.EncodeToString(sum[:]) != strings.TrimPrefix(digest, "sha256:") {
		return nil, fmt.Errorf("chart %s %s from %s does not match the digest of the index", name, version, u.Redacted())
	}
	h.mu.Lock()
	if h.cached+int64(len(tgz)) > maxCachedPackages {
		h.packages, h.cached = map[string][]byte{}, 0
	}
	h.packages[id] = tgz
	h.cached += int64(len(tgz))
	h.mu.Unlock()
	return tgz, nil
}

// resolve reads the repository's index (or remembers it for
// indexResolveTTL) for the package URL and digest of name at version.
func (h *HelmCharts) resolve(ctx context.Context, auth *repositoryAuth, name, version string) (*url.URL, string, error) {
	indexURL := auth.base.JoinPath("index.yaml")
	key := indexURL.String() + " " + name + " " + version
	h.mu.Lock()
	r, ok := h.resolved[key]
	h.mu.Unlock()
	if ok && time.Since(r.at) < indexResolveTTL {
		return r.url, r.digest, nil
	}
	b, err := h.get(ctx, auth, indexURL, maxIndexSize)
	if err != nil {
		return nil, "", err
	}
	var index indexFile
	if err := yaml.Unmarshal(b, &index); err != nil {
		return nil, "", fmt.Errorf("reading %s: %w", indexURL.Redacted(), err)
	}
	for _, e := range index.Entries[name] {
		if e.Version != version && e.Version != strings.TrimPrefix(version, "v") {
			continue
		}
		if len(e.URLs) == 0 {
			return nil, "", fmt.Errorf("chart %s %s has no URL in %s", name, version, indexURL.Redacted())
		}
		ref, err := url.Parse(e.URLs[0])
		if err != nil {
			return nil, "", fmt.Errorf("chart %s %s: %w", name, version, err)
		}
		base := *auth.base
		base.Path = strings.TrimSuffix(base.Path, "/") + "/"
		u := base.ResolveReference(ref)
		h.mu.Lock()
		for k, old := range h.resolved {
			if time.Since(old.at) >= indexResolveTTL {
				delete(h.resolved, k)
			}
		}
		h.resolved[key] = resolvedChart{url: u, digest: e.Digest, at: time.Now()}
		h.mu.Unlock()
		return u, e.Digest, nil
	}
	return nil, "", fmt.Errorf("chart %s %s is not in %s", name, version, indexURL.Redacted())
}

// errTooLarge means a download is over its bound.
var errTooLarge = errors.New("larger than the limit")

// get downloads u, at most limit bytes, within chartFetchTimeout. Basic
// auth goes only to the repository's host (scheme and host:port), also
// across redirects.
func (h *HelmCharts) get(ctx context.Context, auth *repositoryAuth, u *url.URL, limit int64) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, chartFetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	sameHost := func(v *url.URL) bool { return v.Scheme == auth.base.Scheme && v.Host == auth.base.Host }
	if auth.username != "" && sameHost(u) {
		req.SetBasicAuth(auth.username, auth.password)
	}
	c := *h.http
	c.CheckRedirect = func(r *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		if !sameHost(r.URL) {
			r.Header.Del("Authorization")
		}
		return nil
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", u.Redacted(), resp.Status)
	}
	if resp.ContentLength > limit {
		return nil, fmt.Errorf("GET %s: %d bytes, %w of %d", u.Redacted(), resp.ContentLength, errTooLarge, limit)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u.Redacted(), err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("GET %s: %w of %d bytes", u.Redacted(), errTooLarge, limit)
	}
	return b, nil
}
