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

	"github.com/serin-dev/serin/gitops/chartrender"
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
// sent only to the repository's own host: never to a chart URL on another
// host, and a redirect to another host or scheme is refused. Connections
// to loopback, link-local and metadata addresses are refused (loopback
// allowed by --chart-fetch-allow-loopback). The index is parsed in a
// child process (chartrender). Index lookups and packages are kept in
// memory by URL, digest and the identity of the credentials that fetched
// them: a repository read without credentials, or with others, never gets
// an answer fetched with them.
//
// The HelmRepository need not be Ready (source-controller may not have
// fetched it yet when a revert runs): what serin fetches is bounded the
// same whatever its status, the index is parsed outside the agent, and
// the credentials are the HelmRepository's own Secret, in its namespace.
type HelmCharts struct {
	client         client.Reader
	http           *http.Client
	renderer       *chartrender.Renderer
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

// HelmChartsOptions configure HelmCharts.
type HelmChartsOptions struct {
	// CrossNamespace lets a HelmRelease name a HelmRepository of another
	// namespace.
	CrossNamespace bool
	// Renderer renders the charts and reads the indexes (nil: the
	// default bounds).
	Renderer *chartrender.Renderer
	// AllowLoopback lets a HelmRepository or chart URL be a loopback
	// address (--chart-fetch-allow-loopback): for test beds.
	AllowLoopback bool
}

// NewHelmCharts returns HelmCharts reading objects with c.
func NewHelmCharts(c client.Reader, opts HelmChartsOptions) *HelmCharts {
	renderer := opts.Renderer
	if renderer == nil {
		renderer = defaultChartRenderer
	}
	httpClient := outbound.NewClient(outbound.Options{Timeout: chartFetchTimeout, RefuseLocal: true, AllowLoopback: opts.AllowLoopback})
	return &HelmCharts{client: c, http: httpClient, renderer: renderer, maxSize: DefaultMaxChartSize, crossNamespace: opts.CrossNamespace,
		packages: map[string][]byte{}, resolved: map[string]resolvedChart{}}
}

// Renderer implements RenderingChartSource.
func (h *HelmCharts) Renderer() *chartrender.Renderer {
	return h.renderer
}

// repositoryAuth is a HelmRepository's address and basic auth.
type repositoryAuth struct {
	base               *url.URL
	username, password string
}

// identity names the credentials in the caches' keys: a digest of the
// username and password, "anonymous" without them.
func (a *repositoryAuth) identity() string {
	if a.username == "" && a.password == "" {
		return "anonymous"
	}
	sum := sha256.Sum256([]byte(a.username + "\x00" + a.password))
	return hex.EncodeToString(sum[:])
}

// chartURLText is how a chart or index URL is written in a message, an
// event or Git: redacted (userinfo and query values).
func chartURLText(u *url.URL) string {
	return outbound.Redact(u.String())
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
		return nil, notRendered("HelmRepository %s: URL %s is not http:// or https://", key, outbound.Redact(repo.Spec.URL))
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

// fetch finds name at version in the repository's index and downloads
// its package, checking its digest when the index gives one; packages
// with a digest are kept in memory.
func (h *HelmCharts) fetch(ctx context.Context, auth *repositoryAuth, name, version string) ([]byte, error) {
	u, digest, err := h.resolve(ctx, auth, name, version)
	if err != nil {
		return nil, err
	}
	id := auth.identity() + " " + u.String() + "@" + digest
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
		return nil, fmt.Errorf("chart %s %s from %s does not match the digest of the index", name, version, chartURLText(u))
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
// indexResolveTTL, for the same credentials) for the package URL and
// digest of name at version. The index is streamed to a child process
// that parses it (chartrender.ReadIndex): a YAML parse builds generic
// trees several times the document's size, which the agent does not pay
// for.
func (h *HelmCharts) resolve(ctx context.Context, auth *repositoryAuth, name, version string) (*url.URL, string, error) {
	indexURL := auth.base.JoinPath("index.yaml")
	key := auth.identity() + " " + indexURL.String() + " " + name + " " + version
	h.mu.Lock()
	r, ok := h.resolved[key]
	h.mu.Unlock()
	if ok && time.Since(r.at) < indexResolveTTL {
		return r.url, r.digest, nil
	}
	ctx, cancel := context.WithTimeout(ctx, chartFetchTimeout)
	defer cancel()
	body, err := h.open(ctx, auth, indexURL, maxIndexSize)
	if err != nil {
		return nil, "", err
	}
	defer func() { _ = body.Close() }()
	entry, found, err := h.renderer.ReadIndex(ctx, body, maxIndexSize, name, version)
	if err != nil {
		return nil, "", fmt.Errorf("reading %s: %w", chartURLText(indexURL), err)
	}
	if !found {
		return nil, "", fmt.Errorf("chart %s %s is not in %s", name, version, chartURLText(indexURL))
	}
	ref, err := url.Parse(entry.URL)
	if err != nil {
		return nil, "", fmt.Errorf("chart %s %s: its URL in %s does not parse", name, version, chartURLText(indexURL))
	}
	base := *auth.base
	base.Path = strings.TrimSuffix(base.Path, "/") + "/"
	u := base.ResolveReference(ref)
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, "", fmt.Errorf("chart %s %s: its URL %s in %s is not http:// or https://", name, version, chartURLText(u), chartURLText(indexURL))
	}
	h.mu.Lock()
	for k, old := range h.resolved {
		if time.Since(old.at) >= indexResolveTTL {
			delete(h.resolved, k)
		}
	}
	h.resolved[key] = resolvedChart{url: u, digest: entry.Digest, at: time.Now()}
	h.mu.Unlock()
	return u, entry.Digest, nil
}

// errTooLarge means a download is over its bound.
var errTooLarge = errors.New("larger than the limit")

// get downloads u, at most limit bytes, within chartFetchTimeout.
func (h *HelmCharts) get(ctx context.Context, auth *repositoryAuth, u *url.URL, limit int64) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, chartFetchTimeout)
	defer cancel()
	body, err := h.open(ctx, auth, u, limit)
	if err != nil {
		return nil, err
	}
	defer func() { _ = body.Close() }()
	b, err := io.ReadAll(io.LimitReader(body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", chartURLText(u), outbound.RedactError(outbound.WithoutURL(err)))
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("GET %s: %w of %d bytes", chartURLText(u), errTooLarge, limit)
	}
	return b, nil
}

// errRedirectElsewhere is a redirect to another host or scheme than the
// request's, which a chart fetch never follows.
var errRedirectElsewhere = errors.New("the server redirected to another host or scheme, which serin does not follow for a chart")

// open sends the GET of u and returns the answer's body, for the caller
// to read within ctx and close. Basic auth goes only to the repository's
// host (scheme and host:port); a redirect is followed only on the host
// and scheme of the request (at most 10), and refused elsewhere.
func (h *HelmCharts) open(ctx context.Context, auth *repositoryAuth, u *url.URL, limit int64) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", chartURLText(u), outbound.RedactError(outbound.WithoutURL(err)))
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
		if r.URL.Scheme != u.Scheme || r.URL.Host != u.Host {
			return fmt.Errorf("%w (to %s)", errRedirectElsewhere, chartURLText(r.URL))
		}
		return nil
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", chartURLText(u), outbound.RedactError(outbound.WithoutURL(err)))
	}
	if resp.StatusCode != http.StatusOK {
		_ = resp.Body.Close()
		return nil, fmt.Errorf("GET %s: %s", chartURLText(u), resp.Status)
	}
	if resp.ContentLength > limit {
		_ = resp.Body.Close()
		return nil, fmt.Errorf("GET %s: %d bytes, %w of %d", chartURLText(u), resp.ContentLength, errTooLarge, limit)
	}
	return resp.Body, nil
}
