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

package providers

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/serin-dev/serin/api/v1alpha1"
)

// The test's service account and project.
const (
	googleTestProject      = "my-project-123"
	googleTestClientEmail  = "serin@my-project-123.iam.gserviceaccount.com"
	googleTestPrivateKeyID = "0123456789abcdef0123456789abcdef01234567"
	// googleTestQuery is Flagger's documented stackdriver example (the
	// 99th percentile of Istio's server latencies on GKE) in PromQL.
	googleTestQuery = `histogram_quantile(0.99, sum by (le) (rate(istio_io:service_server_response_latencies_bucket{` +
		`monitored_resource="k8s_container",destination_service_namespace="apps",destination_service_name="podinfo-canary"}[1m])))`
)

// googleTestKey is the test's RSA key, made once: a service account key
// as Google makes them, 2048 bits.
var googleTestKey = sync.OnceValue(func() *rsa.PrivateKey {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return key
})

// googleKeyJSON is a service account's JSON key with all the fields of
// the one the Google Cloud console downloads, its private key key in
// PKCS #8 PEM and its token_uri tokenURI.
func googleKeyJSON(t *testing.T, key crypto.Signer, tokenURI string) string {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(map[string]string{
		"type":                        "service_account",
		"project_id":                  googleTestProject,
		"private_key_id":              googleTestPrivateKeyID,
		"private_key":                 string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email":                googleTestClientEmail,
		"client_id":                   "109876543210987654321",
		"auth_uri":                    "https://accounts.google.com/o/oauth2/auth",
		"token_uri":                   tokenURI,
		"auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
		"client_x509_cert_url":        "https://www.googleapis.com/robot/v1/metadata/x509/serin%40my-project-123.iam.gserviceaccount.com",
		"universe_domain":             "googleapis.com",
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// fakeGoogle plays Google's OAuth 2.0 token endpoint (POST /token) and
// Cloud Monitoring's Prometheus query API (GET
// /v1/projects/PROJECT/location/global/prometheus/api/v1/query), since
// neither can run here: it checks the exact wire format Google documents
// and answers as Google does. A request that differs fails the test.
type fakeGoogle struct {
	t   *testing.T
	srv *httptest.Server
	// now is the provider's clock (the token cache's). The JWT is made
	// on the wall clock (x/oauth2 signs it, backdated 10s as Google's
	// libraries do), and checked against it, give or take
	// googleAssertionSkew.
	now func() time.Time
	// expiresIn is the lifetime of the tokens it issues, in seconds.
	expiresIn int
	// tokenAnswer, when set, answers the token requests instead.
	tokenAnswer *wireAnswer
	// queryAnswer answers the queries that carry the last token issued.
	queryAnswer wireAnswer

	mu         sync.Mutex
	tokens     int
	queries    int
	validToken string
}

// googleAssertionSkew is how far a JWT's iat may be from the wall clock:
// the 10s x/oauth2 backdates it by, and a slow test machine.
const googleAssertionSkew = 30 * time.Second

func newFakeGoogle(t *testing.T, queryAnswer wireAnswer) *fakeGoogle {
	t.Helper()
	g := &fakeGoogle{t: t, now: func() time.Time { return testNow }, expiresIn: 3599, queryAnswer: queryAnswer}
	g.srv = httptest.NewServer(http.HandlerFunc(g.serve))
	t.Cleanup(g.srv.Close)
	return g
}

// tokenURI is the token endpoint's address, as the key names it.
func (g *fakeGoogle) tokenURI() string { return g.srv.URL + "/token" }

// provider is a stackdriver provider of the test's project at the fake's
// address, with a key whose token_uri is the fake's, and clock.
func (g *fakeGoogle) provider(clock func() time.Time) Provider {
	g.t.Helper()
	p, err := New(Config{
		Spec: v1alpha1.MetricProvider{Type: v1alpha1.StackdriverProvider, Address: g.srv.URL},
		Secret: map[string][]byte{"project": []byte(googleTestProject + "\n"),
			"serviceAccountKey": []byte(googleKeyJSON(g.t, googleTestKey(), g.tokenURI()))},
		SecretName: "apps/gcp", Timeout: 5 * time.Second, Interval: time.Minute,
	})
	if err != nil {
		g.t.Fatal(err)
	}
	p.(*stackdriver).now = clock
	return p
}

// counts are the token requests and the queries the fake received.
func (g *fakeGoogle) counts() (tokens, queries int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.tokens, g.queries
}

func (g *fakeGoogle) serve(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch r.URL.Path {
	case "/token":
		g.tokens++
		g.serveToken(w, r)
	case "/v1/projects/" + googleTestProject + "/location/global/prometheus/api/v1/query":
		g.queries++
		g.serveQuery(w, r)
	default:
		g.t.Errorf("a request to %s %s, neither the token endpoint nor the query API of project %s", r.Method, r.URL.Path, googleTestProject)
		http.NotFound(w, r)
	}
}

// serveToken is Google's token endpoint: a POSTed form with the JWT
// bearer grant and an assertion signed with the service account's key.
func (g *fakeGoogle) serveToken(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	form, err := url.ParseQuery(string(body))
	if err != nil {
		g.t.Errorf("the token request's body is not a form: %q", body)
	}
	if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" || r.URL.RawQuery != "" {
		g.t.Errorf("token request %s %s?%s with Content-Type %q, want a POST of a form to %s", r.Method, r.URL.Path, r.URL.RawQuery,
			r.Header.Get("Content-Type"), g.tokenURI())
	}
	if got := form.Get("grant_type"); got != "urn:ietf:params:oauth:grant-type:jwt-bearer" || len(form) != 2 {
		g.t.Errorf("token request form %v, want grant_type urn:ietf:params:oauth:grant-type:jwt-bearer and assertion only", form)
	}
	if err := g.checkAssertion(form.Get("assertion")); err != nil {
		g.t.Errorf("the assertion: %v", err)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error": "invalid_grant", "error_description": "Invalid JWT Signature."}`)
		return
	}
	if g.tokenAnswer != nil {
		g.tokenAnswer.write(w)
		return
	}
	g.validToken = fmt.Sprintf("ya29.c.test-token-%d", g.tokens)
	wireAnswer{ContentType: "application/json; charset=utf-8", Body: fmt.Sprintf(
		`{"access_token": %q, "expires_in": %d, "token_type": "Bearer"}`, g.validToken, g.expiresIn)}.write(w)
}

// checkAssertion verifies a JWT as Google does: its RS256 signature with
// the public key of the service account, and its claims.
func (g *fakeGoogle) checkAssertion(assertion string) error {
	parts := strings.Split(assertion, ".")
	if len(parts) != 3 {
		return fmt.Errorf("%d parts, want 3", len(parts))
	}
	signature, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return fmt.Errorf("the signature is not base64url without padding: %w", err)
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(&googleTestKey().PublicKey, crypto.SHA256, digest[:], signature); err != nil {
		return fmt.Errorf("the RS256 signature does not verify with the service account's public key: %w", err)
	}
	var header map[string]any
	if err := decodeJWTPart(parts[0], &header); err != nil {
		return err
	}
	if diff := cmp.Diff(map[string]any{"alg": "RS256", "typ": "JWT", "kid": googleTestPrivateKeyID}, header); diff != "" {
		return fmt.Errorf("header (-want +got):\n%s", diff)
	}
	var claims map[string]any
	if err := decodeJWTPart(parts[1], &claims); err != nil {
		return err
	}
	now := float64(time.Now().Unix())
	if iat, ok := claims["iat"].(float64); ok && time.Duration(max(iat-now, now-iat))*time.Second <= googleAssertionSkew {
		now = iat
	}
	want := map[string]any{
		"iss":   googleTestClientEmail,
		"scope": "https://www.googleapis.com/auth/monitoring.read",
		"aud":   g.tokenURI(),
		"iat":   now,
		"exp":   now + 3600,
	}
	if diff := cmp.Diff(want, claims); diff != "" {
		return fmt.Errorf("claims (-want +got):\n%s", diff)
	}
	return nil
}

func decodeJWTPart(part string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(part)
	if err != nil {
		return fmt.Errorf("not base64url without padding: %w", err)
	}
	return json.Unmarshal(b, v)
}

// serveQuery is Cloud Monitoring's Prometheus query API: a GET with the
// query as its one parameter and the last access token issued; any other
// token is refused as Google refuses it.
func (g *fakeGoogle) serveQuery(w http.ResponseWriter, r *http.Request) {
	want := url.Values{"query": {googleTestQuery}}
	if r.Method != http.MethodGet || !cmp.Equal(want, r.URL.Query()) {
		g.t.Errorf("query %s ?%s, want GET ?%s", r.Method, r.URL.RawQuery, want.Encode())
	}
	if got := r.Header.Get("Authorization"); g.validToken == "" || got != "Bearer "+g.validToken {
		wireAnswer{Status: http.StatusUnauthorized, ContentType: "application/json; charset=UTF-8",
			Body: `{"error": {"code": 401, "message": "Request had invalid authentication credentials. Expected OAuth 2 access token, ` +
				`login cookie or other valid authentication credential.", "status": "UNAUTHENTICATED"}}`}.write(w)
		return
	}
	g.queryAnswer.write(w)
}

// testClock is a clock that a test sets while a fake server reads it.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// promAnswer is a Prometheus query API answer, as Cloud Monitoring's
// gives it: resultType and result.
func promAnswer(resultType, result string) wireAnswer {
	return wireAnswer{ContentType: "application/json", Body: `{"status": "success", "data": {"resultType": "` + resultType + `", "result": ` + result + `}}`}
}

// TestStackdriver checks the wire format of Google Cloud Monitoring's
// Prometheus query API and of Google's OAuth 2.0 token endpoint, since
// Google's services cannot run here: a fake checks the token request (the
// JWT bearer grant, the JWT's RS256 signature with the key's public key,
// its iss, scope, aud, iat and exp) and the query (GET, the project in
// the path, the PromQL as the query parameter, the bearer token it
// issued), and answers with the shapes Google documents.
func TestStackdriver(t *testing.T) {
	sample := func(labels, value string) string {
		return `{"metric": {` + labels + `}, "value": [1795435200, "` + value + `"]}`
	}
	tests := map[string]providerCase{
		"one series":   {answer: promAnswer("vector", `[`+sample("", "12.5")+`]`), want: 12.5},
		"a scalar":     {answer: promAnswer("scalar", `[1795435200, "0.25"]`), want: 0.25},
		"no data":      {answer: promAnswer("vector", `[]`), wantErr: "no values found for query", wantNoData: true},
		"NaN: no data": {answer: promAnswer("vector", `[`+sample("", "NaN")+`]`), wantErr: "returned NaN", wantNoData: true},
		"+Inf":         {answer: promAnswer("vector", `[`+sample("", "+Inf")+`]`), wantErr: "not a finite number"},
		"several series": {
			answer: promAnswer("vector", `[`+sample(`"destination_service_name": "podinfo-canary", "pod": "a"`, "1")+`,`+
				sample(`"destination_service_name": "podinfo-canary", "pod": "b"`, "2")+`]`),
			wantErr: `returned 2 series ({destination_service_name="podinfo-canary",pod="a"}, ` +
				`{destination_service_name="podinfo-canary",pod="b"}); a metric check needs one number`,
		},
		"permission denied": {
			answer: wireAnswer{Status: http.StatusForbidden, ContentType: "application/json; charset=UTF-8",
				Body: `{"error": {"code": 403, "message": "Permission monitoring.timeSeries.list denied (or the resource may not exist).", "status": "PERMISSION_DENIED"}}`},
			wantErr: "answered 403: PERMISSION_DENIED: Permission monitoring.timeSeries.list denied…",
		},
		"a PromQL error": {
			answer: wireAnswer{Status: http.StatusBadRequest, ContentType: "application/json",
				Body: `{"status": "error", "errorType": "bad_data", "error": "invalid parameter \"query\": 1:20: parse error: unexpected \"}\""}`},
			wantErr: `answered 400: bad_data: invalid parameter "query": 1:20: parse error: unexpec…`,
		},
		"unavailable, not JSON": {
			answer:  wireAnswer{Status: http.StatusServiceUnavailable, ContentType: "text/html", Body: "<html>Service Unavailable</html>"},
			wantErr: "answered 503: <html>Service Unavailable</html>",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			g := newFakeGoogle(t, tc.answer)
			v, err := g.provider(g.now).Query(context.Background(), googleTestQuery)
			checkQueryResult(t, v, err, tc)
			if tokens, queries := g.counts(); tokens != 1 || queries != 1 {
				t.Errorf("%d token requests and %d queries, want 1 and 1", tokens, queries)
			}
		})
	}
}

// An access token serves every query of the same key until shortly
// before it expires, whichever provider (check) sends them; then, or
// once the API refuses it, a new one is asked for.
func TestStackdriver_AccessToken(t *testing.T) {
	g := newFakeGoogle(t, promAnswer("scalar", `[1795435200, "1"]`))
	clock := &testClock{t: testNow}
	g.now = clock.now
	query := func(wantTokens, wantQueries int) {
		t.Helper()
		if _, err := g.provider(clock.now).Query(context.Background(), googleTestQuery); err != nil {
			t.Fatal(err)
		}
		if tokens, queries := g.counts(); tokens != wantTokens || queries != wantQueries {
			t.Fatalf("%d token requests and %d queries, want %d and %d", tokens, queries, wantTokens, wantQueries)
		}
	}
	for i := range 3 {
		query(1, i+1)
	}
	clock.set(testNow.Add(3599*time.Second - googleTokenRefreshMargin - time.Second))
	query(1, 4)
	clock.set(testNow.Add(3599*time.Second - googleTokenRefreshMargin))
	query(2, 5)
	query(2, 6)

	// Google revokes the token: the query is refused, the next one asks
	// for a new token.
	g.mu.Lock()
	g.validToken = "revoked"
	g.mu.Unlock()
	_, err := g.provider(clock.now).Query(context.Background(), googleTestQuery)
	if err == nil || !strings.Contains(err.Error(), "answered 401: UNAUTHENTICATED: Request had invalid authentication credentials") {
		t.Fatalf("err = %v, want Google's 401", err)
	}
	query(3, 8)

	// A token that would expire within the margin is not kept.
	g.mu.Lock()
	g.expiresIn = 30
	g.mu.Unlock()
	clock.set(testNow.Add(2 * time.Hour))
	query(4, 9)
	query(5, 10)
}

// The token endpoint's error fails the check with Google's OAuth 2.0
// error, naming the service account; no query is sent.
func TestStackdriver_TokenError(t *testing.T) {
	tests := map[string]struct {
		answer  wireAnswer
		wantErr string
	}{
		"invalid grant": {
			answer: wireAnswer{Status: http.StatusBadRequest, ContentType: "application/json",
				Body: `{"error": "invalid_grant", "error_description": "Invalid JWT Signature."}`},
			wantErr: "answered 400: invalid_grant: Invalid JWT Signature.",
		},
		"a deleted account": {
			answer: wireAnswer{Status: http.StatusUnauthorized, ContentType: "application/json",
				Body: `{"error": "invalid_client", "error_description": "The OAuth client was not found."}`},
			wantErr: "answered 401: invalid_client: The OAuth client was not found.",
		},
		"no token": {
			answer:  wireAnswer{ContentType: "application/json", Body: `{"token_type": "Bearer"}`},
			wantErr: "answered 200: no access_token",
		},
		"not JSON": {
			answer:  wireAnswer{ContentType: "text/html", Body: `<html>captive portal</html>`},
			wantErr: `answered 200: no JSON: "<html>captive portal</html>"`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			g := newFakeGoogle(t, promAnswer("scalar", `[1795435200, "1"]`))
			g.mu.Lock()
			g.tokenAnswer = &tc.answer
			g.mu.Unlock()
			_, err := g.provider(g.now).Query(context.Background(), googleTestQuery)
			want := "stackdriver: no access token for " + googleTestClientEmail + ": token endpoint at " + g.tokenURI() + " " + tc.wantErr
			if err == nil || err.Error() != want {
				t.Errorf("err = %v, want %q", err, want)
			}
			if _, queries := g.counts(); queries != 0 {
				t.Errorf("%d queries sent without a token", queries)
			}
		})
	}
}

// The token endpoint is called through the outbound policy: a token_uri
// that redirects is refused (the assertion goes nowhere else), one that
// is not an http or https URL fails saying so; and the query's redirect
// is refused too, its bearer token sent nowhere else.
func TestStackdriver_OutboundPolicy(t *testing.T) {
	var stolen atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { stolen.Add(1) }))
	defer elsewhere.Close()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/collect", http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()
	g := newFakeGoogle(t, promAnswer("scalar", `[1795435200, "1"]`))
	tests := map[string]struct {
		address, tokenURI, wantErr string
	}{
		"a token_uri that redirects": {address: g.srv.URL, tokenURI: redirector.URL + "/token",
			wantErr: "stackdriver: no access token for " + googleTestClientEmail + ": token endpoint query failed: " + redirector.URL +
				"/token: the server answered with a redirect to " + elsewhere.URL + "/collect, and serin follows none"},
		"a token_uri that is not http": {address: g.srv.URL, tokenURI: "file:///var/run/secrets/token",
			wantErr: "stackdriver: no access token for " + googleTestClientEmail +
				": token_uri: invalid address file:///var/run/secrets/token: the scheme must be http or https"},
		"a token_uri with no host": {address: g.srv.URL, tokenURI: "https:///token",
			wantErr: "token_uri: invalid address https:///token: no host"},
		"a query that redirects": {address: redirector.URL, tokenURI: g.tokenURI(),
			wantErr: "stackdriver query failed: " + redirector.URL + "/v1/projects/" + googleTestProject +
				"/location/global/prometheus/api/v1/query?query=redacted: the server answered with a redirect to " + elsewhere.URL +
				"/collect, and serin follows none"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p, err := New(Config{
				Spec: v1alpha1.MetricProvider{Type: v1alpha1.StackdriverProvider, Address: tc.address},
				Secret: map[string][]byte{"project": []byte(googleTestProject),
					"serviceAccountKey": []byte(googleKeyJSON(t, googleTestKey(), tc.tokenURI))},
				SecretName: "apps/gcp", Timeout: 5 * time.Second,
			})
			if err != nil {
				t.Fatal(err)
			}
			setTestClock(p)
			_, err = p.Query(context.Background(), googleTestQuery)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			if strings.Contains(err.Error(), "ya29") || strings.Contains(err.Error(), "eyJ") {
				t.Errorf("the error shows a token or an assertion: %v", err)
			}
		})
	}
	if stolen.Load() != 0 {
		t.Errorf("the redirect was followed %d times", stolen.Load())
	}
}

// A stackdriver provider needs the project and a service account's JSON
// key; a key that is not one fails saying what is wrong, without quoting
// it. Its address defaults to Google's API, its token endpoint to
// Google's.
func TestNewStackdriverProvider(t *testing.T) {
	key := googleKeyJSON(t, googleTestKey(), "https://oauth2.googleapis.com/token")
	withKey := func(edit func(map[string]any)) string {
		var m map[string]any
		if err := json.Unmarshal([]byte(key), &m); err != nil {
			t.Fatal(err)
		}
		edit(m)
		b, _ := json.Marshal(m)
		return string(b)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pkcs1 := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(googleTestKey())}))
	tests := map[string]struct {
		secret       map[string]string
		noSecret     bool
		wantErr      string
		wantTokenURI string
	}{
		"a key from the console": {secret: map[string]string{"project": googleTestProject, "serviceAccountKey": key},
			wantTokenURI: "https://oauth2.googleapis.com/token"},
		"no token_uri: Google's": {secret: map[string]string{"project": googleTestProject,
			"serviceAccountKey": withKey(func(m map[string]any) { delete(m, "token_uri") })},
			wantTokenURI: "https://oauth2.googleapis.com/token"},
		"a PKCS #1 key": {secret: map[string]string{"project": googleTestProject,
			"serviceAccountKey": withKey(func(m map[string]any) { m["private_key"] = pkcs1 })},
			wantTokenURI: "https://oauth2.googleapis.com/token"},
		"no Secret": {noSecret: true,
			wantErr: "the stackdriver provider needs a secretRef with project and serviceAccountKey"},
		"no project": {secret: map[string]string{"serviceAccountKey": key},
			wantErr: "secret apps/gcp has no project (the stackdriver provider needs project and serviceAccountKey)"},
		"a blank project": {secret: map[string]string{"project": " \n", "serviceAccountKey": key},
			wantErr: "secret apps/gcp has no project (the stackdriver provider needs project and serviceAccountKey)"},
		"no key: workload identity is not used": {secret: map[string]string{"project": googleTestProject},
			wantErr: "secret apps/gcp has no serviceAccountKey (the stackdriver provider needs project and serviceAccountKey)"},
		"not JSON": {secret: map[string]string{"project": googleTestProject, "serviceAccountKey": "-----BEGIN PRIVATE KEY-----\nMIIE"},
			wantErr: "secret apps/gcp: serviceAccountKey is not JSON (at byte 2): it must be a service account's JSON key"},
		"a field of the wrong type": {secret: map[string]string{"project": googleTestProject,
			"serviceAccountKey": withKey(func(m map[string]any) { m["private_key"] = 42 })},
			wantErr: "secret apps/gcp: serviceAccountKey is not a service account's JSON key: a field has the wrong type"},
		"a user's credentials": {secret: map[string]string{"project": googleTestProject,
			"serviceAccountKey": `{"type": "authorized_user", "client_id": "x", "client_secret": "s3cr3t", "refresh_token": "r"}`},
			wantErr: `secret apps/gcp: serviceAccountKey is a key of type "authorized_user", not a service account's JSON key ` +
				`(type service_account): serin exchanges no other credentials`},
		"workload identity federation": {secret: map[string]string{"project": googleTestProject,
			"serviceAccountKey": `{"type": "external_account", "audience": "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/k"}`},
			wantErr: `serviceAccountKey is a key of type "external_account", not a service account's JSON key`},
		"no client_email": {secret: map[string]string{"project": googleTestProject,
			"serviceAccountKey": withKey(func(m map[string]any) { delete(m, "client_email") })},
			wantErr: "secret apps/gcp: serviceAccountKey has no client_email"},
		"no private_key": {secret: map[string]string{"project": googleTestProject,
			"serviceAccountKey": withKey(func(m map[string]any) { delete(m, "private_key") })},
			wantErr: "secret apps/gcp: serviceAccountKey has no private_key"},
		"a private_key that is not PEM": {secret: map[string]string{"project": googleTestProject,
			"serviceAccountKey": withKey(func(m map[string]any) { m["private_key"] = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" })},
			wantErr: "secret apps/gcp: serviceAccountKey has a private_key that is not PEM"},
		"a private_key cut short": {secret: map[string]string{"project": googleTestProject,
			"serviceAccountKey": withKey(func(m map[string]any) {
				m["private_key"] = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n"
			})},
			wantErr: "secret apps/gcp: serviceAccountKey has a private_key that is not a PKCS #8 or PKCS #1 private key (PEM PRIVATE KEY)"},
		"an EC key": {secret: map[string]string{"project": googleTestProject,
			"serviceAccountKey": googleKeyJSON(t, ecKey, "https://oauth2.googleapis.com/token")},
			wantErr: "secret apps/gcp: serviceAccountKey has a private_key that is a *ecdsa.PrivateKey, not an RSA key"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			cfg := Config{Spec: v1alpha1.MetricProvider{Type: v1alpha1.StackdriverProvider}, SecretName: "apps/gcp"}
			if !tt.noSecret {
				cfg.Secret = map[string][]byte{}
				for k, v := range tt.secret {
					cfg.Secret[k] = []byte(v)
				}
			}
			p, err := New(cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "MIIE") || strings.Contains(err.Error(), "s3cr3t") {
					t.Errorf("the error quotes the key: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			s := p.(*stackdriver)
			if s.address != "https://monitoring.googleapis.com" || s.project != googleTestProject || s.account.config.TokenURL != tt.wantTokenURI {
				t.Errorf("address %q, project %q, token_uri %q; want https://monitoring.googleapis.com, %s, %s",
					s.address, s.project, s.account.config.TokenURL, googleTestProject, tt.wantTokenURI)
			}
		})
	}
}

// The cache holds at most its bound: a new token drops those past their
// use, else the one that expires first.
func TestGoogleTokenCache(t *testing.T) {
	key := func(i int) [sha256.Size]byte { return sha256.Sum256([]byte{byte(i)}) }
	c := &googleTokenCache{max: 3}
	c.put(key(1), "t1", testNow.Add(30*time.Minute), testNow)
	c.put(key(2), "t2", testNow.Add(10*time.Minute), testNow)
	c.put(key(3), "t3", testNow.Add(20*time.Minute), testNow)
	c.put(key(4), "t4", testNow.Add(time.Hour), testNow)
	got := func(at time.Time) []string {
		var tokens []string
		for i := 1; i <= 5; i++ {
			if v, ok := c.get(key(i), at); ok {
				tokens = append(tokens, v)
			}
		}
		return tokens
	}
	if diff := cmp.Diff([]string{"t1", "t3", "t4"}, got(testNow)); diff != "" {
		t.Errorf("a full cache drops the token that expires first (-want +got):\n%s", diff)
	}
	// At +25m, t3 is past its use (within the margin of its expiry): it
	// goes first, and t1 stays.
	later := testNow.Add(25 * time.Minute)
	c.put(key(5), "t5", later.Add(time.Hour), later)
	if diff := cmp.Diff([]string{"t1", "t4", "t5"}, got(later)); diff != "" {
		t.Errorf("a full cache drops the tokens past their use first (-want +got):\n%s", diff)
	}
	c.forget(key(4), "another")
	c.forget(key(5), "t5")
	if diff := cmp.Diff([]string{"t1", "t4"}, got(later)); diff != "" {
		t.Errorf("forget drops the refused token only (-want +got):\n%s", diff)
	}
}
