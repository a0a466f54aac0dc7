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

package testbed

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Gitea admin account of the testbed.
const (
	GiteaUser     = "serin"
	giteaEmail    = "serin@testbed.serin.dev"
	giteaPassword = "testbed-Passw0rd"
)

// Gitea is a real Git host with a pull-request API (Gitea with SQLite,
// offline, on loopback), for the GitOps revert tests.
type Gitea struct {
	// URL is the base URL, http://127.0.0.1:PORT; repositories are at
	// URL/OWNER/NAME.git and the API at URL/api/v1.
	URL string
	// User is the admin user and Token its API token (all scopes), which
	// also authenticates Git over HTTP as the password.
	User, Token string
}

// GiteaOptions configure StartGitea.
type GiteaOptions struct {
	// AssetsDir holds gitea and gitea-static/ (templates, options, public);
	// defaults to $KUBEBUILDER_ASSETS.
	AssetsDir string
}

var giteaToken = regexp.MustCompile(`Access token was successfully created\.\.\. ([0-9a-f]{40})`)

// StartGitea migrates a fresh Gitea database, creates the admin user with
// an API token, starts the server and waits until it answers.
func (tb *Testbed) StartGitea(ctx context.Context, opts GiteaOptions) (*Gitea, error) {
	if opts.AssetsDir == "" {
		opts.AssetsDir = os.Getenv("KUBEBUILDER_ASSETS")
	}
	bin := filepath.Join(opts.AssetsDir, "gitea")
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("gitea not built: run hack/testbed/build.sh gitea (make testbed-binaries): %w", err)
	}
	static, err := filepath.EvalSymlinks(filepath.Join(opts.AssetsDir, "gitea-static"))
	if err != nil {
		return nil, fmt.Errorf("gitea templates not found next to the binary: %w", err)
	}
	dir := filepath.Join(tb.Dir, "gitea")
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		return nil, err
	}
	ports, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	runUser := "root"
	if u, err := user.Current(); err == nil {
		runUser = u.Username
	}
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	url := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	config := filepath.Join(dir, "app.ini")
	ini := fmt.Sprintf(`APP_NAME = serin testbed
RUN_MODE = prod
RUN_USER = %[1]s
WORK_PATH = %[2]s
I_AM_BEING_UNSAFE_RUNNING_AS_ROOT = true

[server]
PROTOCOL = http
HTTP_ADDR = 127.0.0.1
HTTP_PORT = %[3]d
ROOT_URL = %[4]s/
DOMAIN = 127.0.0.1
DISABLE_SSH = true
OFFLINE_MODE = true
LFS_START_SERVER = false
STATIC_ROOT_PATH = %[5]s
APP_DATA_PATH = %[2]s/data

[database]
DB_TYPE = sqlite3
PATH = %[2]s/data/gitea.db
; Tests run side by side push, open pull requests and set statuses at
; once: wait for SQLite's lock rather than answer 500.
SQLITE_TIMEOUT = 30000
SQLITE_JOURNAL_MODE = WAL

[repository]
ROOT = %[2]s/repositories
DEFAULT_BRANCH = main

[security]
INSTALL_LOCK = true
SECRET_KEY = %[6]s

[service]
DISABLE_REGISTRATION = true

; immediate queues deadlock the pull-request API after a merge
[queue]
TYPE = channel

[indexer]
ISSUE_INDEXER_TYPE = db
REPO_INDEXER_ENABLED = false

[session]
PROVIDER = memory

[cache]
ADAPTER = memory

[picture]
DISABLE_GRAVATAR = true

[mailer]
ENABLED = false

[actions]
ENABLED = false

[cron]
ENABLED = false

[log]
MODE = console
LEVEL = Warn
ROOT_PATH = %[2]s/log
`, runUser, dir, ports[0], url, static, hex.EncodeToString(secret))
	if err := os.WriteFile(config, []byte(ini), 0o600); err != nil {
		return nil, err
	}
	env := []string{"GITEA_WORK_DIR=" + dir, "GITEA_I_AM_BEING_UNSAFE_RUNNING_AS_ROOT=true", "HOME=" + dir}
	run := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, bin, append(args, "--config", config)...)
		cmd.Env = append(os.Environ(), env...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("gitea %s: %w\n%s", args[0], err, out)
		}
		return string(out), nil
	}
	if _, err := run("migrate"); err != nil {
		return nil, err
	}
	out, err := run("admin", "user", "create", "--admin", "--username", GiteaUser, "--password", giteaPassword,
		"--email", giteaEmail, "--must-change-password=false", "--access-token", "--access-token-name", "testbed",
		"--access-token-scopes", "all")
	if err != nil {
		return nil, err
	}
	m := giteaToken.FindStringSubmatch(out)
	if m == nil {
		return nil, fmt.Errorf("gitea admin user create printed no token:\n%s", out)
	}
	g := &Gitea{URL: url, User: GiteaUser, Token: m[1]}

	if err := tb.startProcess(bin, env, "web", "--config", config); err != nil {
		return nil, err
	}
	if err := tb.waitReady(ctx, url+"/api/healthz"); err != nil {
		return nil, err
	}
	return g, nil
}

// RepositoryURL is the Git URL of a repository of the admin user.
func (g *Gitea) RepositoryURL(name string) string {
	return g.URL + "/" + g.User + "/" + name + ".git"
}

// CreateRepository creates an empty private repository of the admin user
// whose default branch is main.
func (g *Gitea) CreateRepository(ctx context.Context, name string) error {
	return g.API(ctx, http.MethodPost, "/user/repos", map[string]any{
		"name": name, "private": true, "default_branch": "main", "auto_init": false,
	}, nil)
}

// API calls the Gitea API (path relative to /api/v1) as the admin user,
// sending in as JSON and decoding the answer into out when not nil.
func (g *Gitea) API(ctx context.Context, method, path string, in, out any) error {
	_, err := g.call(ctx, method, path, in, out)
	return err
}

// Raw returns the body of a GET of the Gitea API (diffs are not JSON).
func (g *Gitea) Raw(ctx context.Context, path string) (string, error) {
	return g.call(ctx, http.MethodGet, path, nil, nil)
}

func (g *Gitea) call(ctx context.Context, method, path string, in, out any) (string, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return "", err
		}
		body = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, g.URL+"/api/v1"+path, body)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "token "+g.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode >= 300 {
		return "", fmt.Errorf("gitea %s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(b)))
	}
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			return "", errors.Join(fmt.Errorf("gitea %s %s: bad JSON", method, path), err)
		}
	}
	return string(b), nil
}

// CreateUser creates a user of the Gitea server (not an admin) with an API
// token of its own, and returns the server as that user sees it: its API
// calls and Git pushes are that user's, with only the rights it was given
// (AddCollaborator). Two clusters of a test each hold their own user.
func (g *Gitea) CreateUser(ctx context.Context, name string) (*Gitea, error) {
	password := giteaPassword + "-" + name
	if err := g.API(ctx, http.MethodPost, "/admin/users", map[string]any{
		"username": name, "email": name + "@testbed.serin.dev", "password": password,
		"must_change_password": false, "send_notify": false,
	}, nil); err != nil {
		return nil, err
	}
	// A token is created with the user's password (basic auth), not with
	// the admin's token.
	b, err := json.Marshal(map[string]any{"name": "testbed", "scopes": []string{"all"}})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.URL+"/api/v1/users/"+name+"/tokens", bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.SetBasicAuth(name, password)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var token struct {
		SHA1 string `json:"sha1"`
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 300 {
		return nil, fmt.Errorf("gitea: token of %s: %s: %s", name, resp.Status, strings.TrimSpace(string(body)))
	}
	if err := json.Unmarshal(body, &token); err != nil || token.SHA1 == "" {
		return nil, fmt.Errorf("gitea: token of %s: no token in %s", name, body)
	}
	return &Gitea{URL: g.URL, User: name, Token: token.SHA1}, nil
}

// AddCollaborator gives user permission ("read", "write" or "admin") on a
// repository of g's user.
func (g *Gitea) AddCollaborator(ctx context.Context, repo, user, permission string) error {
	return g.API(ctx, http.MethodPut, "/repos/"+g.User+"/"+repo+"/collaborators/"+user,
		map[string]any{"permission": permission}, nil)
}
