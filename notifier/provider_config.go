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
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	notificationv1 "github.com/fluxcd/notification-controller/api/v1beta3"
	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
)

// providerConfig is a Flux Provider resolved with its Secrets: what
// notification-controller builds a notifier from.
type providerConfig struct {
	typ      string
	address  string
	channel  string
	username string
	token    string
	headers  map[string]string
	endpoint endpoint
	// cluster is the agent's --cluster-name, part of the commit status
	// context.
	cluster string
}

// formatter turns an event into the request a Provider type expects, or
// returns errSkip for an event the type does not take. Chat and generic
// types send the request notification-controller v1.9 sends; commit-status
// types (github, gitlab, gitea) set serin's own status (commitStatusOf).
type formatter func(cfg providerConfig, e eventv1.Event) (request, error)

// errSkip is what a formatter returns when its Provider type has nothing
// to send for an event (a commit-status Provider and a progress event):
// nothing is posted, and the delivery is not a failure.
var errSkip = errors.New("nothing to send for this event")

// formatters are the Provider types serin posts to directly.
var formatters = map[string]formatter{
	notificationv1.SlackProvider:       slackRequest,
	notificationv1.MSTeamsProvider:     msteamsRequest,
	notificationv1.DiscordProvider:     discordRequest,
	notificationv1.GoogleChatProvider:  googleChatRequest,
	notificationv1.RocketProvider:      rocketRequest,
	notificationv1.GenericProvider:     genericRequest,
	notificationv1.GenericHMACProvider: genericHMACRequest,
	notificationv1.GitHubProvider:      githubRequest,
	notificationv1.GitLabProvider:      gitlabRequest,
	notificationv1.GiteaProvider:       giteaRequest,
}

// SupportedProviderTypes lists the Provider types of direct mode.
func SupportedProviderTypes() []string {
	types := make([]string, 0, len(formatters))
	for t := range formatters {
		types = append(types, t)
	}
	slices.Sort(types)
	return types
}

// objectName is how notification-controller names the involved object in
// messages: kind/name.namespace, kind in lower case.
func objectName(e eventv1.Event) string {
	return fmt.Sprintf("%s/%s.%s", strings.ToLower(e.InvolvedObject.Kind), e.InvolvedObject.Name, e.InvolvedObject.Namespace)
}

// sortedKeys returns the metadata keys in order, so that payloads are
// stable (notification-controller walks the map in random order).
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// jsonRequest marshals payload into a JSON POST to url.
func jsonRequest(url string, payload any, header http.Header) (request, error) {
	body, err := json.Marshal(payload)
	if err != nil {
		return request{}, fmt.Errorf("failed to marshal the payload: %w", err)
	}
	if header == nil {
		header = http.Header{}
	}
	header.Set("Content-Type", "application/json")
	return request{url: url, body: body, header: header}, nil
}
