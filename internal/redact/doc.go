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

// Package redact makes what serin writes (commit messages, pull request
// bodies, Kubernetes and Flux events, status messages, logs) free of the
// secrets a URL or an error may carry. It owns one thing: turning a URL,
// a text or an error into the same with every credential replaced by
// "redacted". It imports nothing of serin.
//
// A URL loses:
//   - its userinfo, whole (https://redacted@host/): a user name can be a
//     token (https://TOKEN@github.com/);
//   - every query value, the keys kept (?token=redacted);
//   - its fragment;
//   - each path segment that has the form of a token: one that starts
//     with a known token prefix (GitHub's ghp_, gho_, ghs_, ghu_, ghr_ and
//     github_pat_, GitLab's glpat-, gldt-, glptt-, glrt-, gloas-), one that
//     reads user:secret with a known token user (x-access-token,
//     x-token-auth, oauth2, gitlab-ci-token, private-token, token), and
//     the segment after one named like a credential (token, tokens,
//     access-token, access_token, private-token, private_token, api-key,
//     api_key, apikey, secret, password, passwd).
//
// Input that does not parse as a URL gives Unparsable, never the input.
// A text has every URL in it redacted (scheme://… up to a space, a quote,
// a backslash or an angle bracket) and every bare token of a known prefix
// replaced; an error keeps its chain (errors.Is, errors.As) with its
// message redacted, the URL a *url.Error names replaced whole.
//
// What it cannot know stays: a secret of no known form written in a path
// (a Slack webhook's) is for the caller to drop (print the origin only).
package redact
