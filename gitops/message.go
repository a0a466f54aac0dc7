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
	"fmt"
	"strings"
	"text/template"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/serin-dev/serin/internal/redact"
)

// DefaultMessageTemplate is the commit message of a revert. The first line
// is also the pull request's title, the rest its description.
const DefaultMessageTemplate = `Revert {{ .Target }} in {{ .Namespace }} to {{ short .GoodCommit }}

{{ if .Group }}CanaryGroup {{ .Namespace }}/{{ .Group }}: canary {{ .Canary }}{{ else }}Canary {{ .Namespace }}/{{ .Canary }}{{ end }} {{ lower .Phase }} the promotion of revision
{{ .BadRevision }}{{ with .Reason }}:
{{ . }}{{ end }}
{{- if .Analysis }}

Analysis at canary weight {{ .AnalysisWeight }}% (its last failed step, else its last step):
{{- range .Analysis }}
- {{ . }}
{{- end }}
{{- end }}

This makes {{ .Target }} render as it did at {{ .GoodRevision }},
its last promoted revision, and changes nothing else.
{{- if .RevertedCommits }}

This reverts commit{{ if gt (len .RevertedCommits) 1 }}s{{ end }} {{ join .RevertedCommits ", " }}.
{{- end }}
{{- range .Notes }}
{{ . }}
{{- end }}
`

// MessageData is what a commit message template can use. Templates are
// hermetic: they see this data and a few pure functions (short, lower,
// upper, join, trim), nothing of the environment.
type MessageData struct {
	// Canary and Namespace name the Canary.
	Canary, Namespace string
	// Phase is the phase that triggered the revert (Halted, Failed).
	Phase string
	// Target is the reverted object, Kind/name.
	Target string
	// BadRevision and GoodRevision are Flux revisions (main@sha1:…).
	BadRevision, GoodRevision string
	// BadCommit and GoodCommit are their commit hashes.
	BadCommit, GoodCommit string
	// Reason is why the revision is bad.
	Reason string
	// Analysis describes the analysis step that decided the rollout (the
	// last that did not pass, else the last), a line per metric check
	// (value, range, verdict) and webhook; empty when the analysis record
	// has no step. AnalysisWeight is the canary's weight in that step.
	Analysis       []string
	AnalysisWeight int
	// Strategy is Revert or Edit.
	Strategy string
	// RevertedCommits are the commits undone by a Revert.
	RevertedCommits []string
	// Files are the changed files.
	Files []string
	// Notes explain the change.
	Notes []string
	// Group names the CanaryGroup whose release is reverted, "" for a
	// Canary alone; Target then lists every member's target.
	Group string
}

var messageFuncs = template.FuncMap{
	"short": ShortSHA,
	"lower": strings.ToLower,
	"upper": strings.ToUpper,
	"join":  strings.Join,
	"trim":  strings.TrimSpace,
}

// ParseMessageTemplate parses a commit message template ("" is the default).
func ParseMessageTemplate(text string) (*template.Template, error) {
	if strings.TrimSpace(text) == "" {
		text = DefaultMessageTemplate
	}
	t, err := template.New("commit").Funcs(messageFuncs).Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, fmt.Errorf("invalid commit message template: %w", err)
	}
	return t, nil
}

// trailers identify serin's revert commits, whatever the template says.
func trailers(namespace, canary, badCommit string) string {
	return fmt.Sprintf("Serin-Canary: %s/%s\nSerin-Reverts: %s\n", namespace, canary, badCommit)
}

// groupTrailers identify the revert commit of a group's release.
func groupTrailers(namespace, group, badCommit string) string {
	return fmt.Sprintf("Serin-Group: %s/%s\nSerin-Reverts: %s\n", namespace, group, badCommit)
}

// renderMessage runs the template, redacts what it wrote (redactMessage)
// and appends serin's trailers, which name the bad commit the revert was
// asked for (and the group, for a release).
func renderMessage(t *template.Template, d MessageData, revertOf string) (string, error) {
	var sb strings.Builder
	if err := t.Execute(&sb, d); err != nil {
		return "", fmt.Errorf("commit message template: %w", err)
	}
	msg := strings.TrimRight(redactMessage(sb.String()), "\n") + "\n"
	if strings.TrimSpace(msg) == "" {
		return "", fmt.Errorf("commit message template rendered an empty message")
	}
	if d.Group != "" {
		return msg + "\n" + groupTrailers(d.Namespace, d.Group, revertOf), nil
	}
	return msg + "\n" + trailers(d.Namespace, d.Canary, revertOf), nil
}

// splitMessage returns a commit message's title and body.
func splitMessage(msg string) (title, body string) {
	title, body, _ = strings.Cut(strings.TrimSpace(msg), "\n")
	return strings.TrimSpace(title), strings.TrimSpace(body)
}

// redactMessage returns a commit message with every URL in it redacted
// and every token of a known form replaced (redact.Text): a reason, a
// note or an error it quotes may name a repository or webhook URL with
// its credentials, and a commit message goes into Git history and the
// pull request for everyone who can read the repository.
func redactMessage(msg string) string { return redact.Text(msg) }

// redactedPlan is plan with the commit message it writes redacted
// (redactMessage): every change, a revert's or a promotion's, is
// committed and proposed with the words it returns.
func redactedPlan(plan func(head *object.Commit) (*Plan, string, error)) func(head *object.Commit) (*Plan, string, error) {
	return func(head *object.Commit) (*Plan, string, error) {
		p, msg, err := plan(head)
		return p, redactMessage(msg), err
	}
}
