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

package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/internal/version"
)

const (
	// agentDeploymentName is the agent's Deployment in config/manager.
	agentDeploymentName = "serin-agent"
	// agentContainerName is the agent's container in that Deployment.
	agentContainerName = "agent"
	// defaultAgentNamespace is where config/default installs the agent.
	defaultAgentNamespace = "serin-system"
	// agentVersionTimeout keeps `serin version` quick when no cluster answers.
	agentVersionTimeout = 10 * time.Second
)

func newVersionCommand(env *environment) *cobra.Command {
	var clientOnly bool
	var agentNamespace, output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the versions of the CLI and of the agent",
		Long: `Print the version of this CLI (with the Git commit and the Go version it was
built with) and the version of the serin agent, read from the image tag of
the serin-agent Deployment. When the cluster cannot be reached, the agent's
version is unknown and the command still succeeds.`,
		Example: `  serin version
  serin version --client
  serin version -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "" && output != "json" {
				return fmt.Errorf("unknown output format %q: use json, or leave --output out", output)
			}
			report := versionReport{Client: env.version()}
			if !clientOnly {
				ctx, cancel := context.WithTimeout(cmd.Context(), min(env.timeout, agentVersionTimeout))
				defer cancel()
				report.Agent = agentVersion(ctx, env, agentNamespace)
			}
			if output == "json" {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(report)
			}
			report.print(cmd.OutOrStdout())
			return nil
		},
	}
	cmd.Flags().BoolVar(&clientOnly, "client", false, "print the CLI's version only, without contacting the cluster")
	cmd.Flags().StringVar(&agentNamespace, "agent-namespace", defaultAgentNamespace,
		"namespace of the serin-agent Deployment")
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json (default: text)")
	return cmd
}

// versionReport is what `serin version` prints.
type versionReport struct {
	Client version.Info `json:"client"`
	// Agent is nil with --client.
	Agent *agentInfo `json:"agent,omitempty"`
}

// agentInfo is the agent's version, or why it is unknown.
type agentInfo struct {
	Version string `json:"version,omitempty"`
	Error   string `json:"error,omitempty"`
}

// print writes the report as text: "serin: v0.3.0 (commit …, go1.26.8
// linux/amd64)", then the agent's line.
func (r versionReport) print(out io.Writer) {
	details := []string{}
	if c := r.Client.GitCommit; c != "" {
		if r.Client.GitTreeState == "dirty" {
			c += ", dirty"
		}
		details = append(details, "commit "+c)
	}
	details = append(details, r.Client.GoVersion+" "+r.Client.Platform)
	fmt.Fprintf(out, "serin: %s (%s)\n", r.Client.Version, strings.Join(details, ", "))
	switch {
	case r.Agent == nil:
	case r.Agent.Error != "":
		fmt.Fprintf(out, "serin-agent: unknown (%s)\n", r.Agent.Error)
	default:
		fmt.Fprintf(out, "serin-agent: %s\n", r.Agent.Version)
	}
}

// agentVersion is the image tag of the agent's container, or why it is
// unknown.
func agentVersion(ctx context.Context, env *environment, namespace string) *agentInfo {
	kube, err := env.newClient()
	if err != nil {
		return &agentInfo{Error: err.Error()}
	}
	deployment := &appsv1.Deployment{}
	key := client.ObjectKey{Namespace: namespace, Name: agentDeploymentName}
	if err := kube.Get(ctx, key, deployment); err != nil {
		return &agentInfo{Error: err.Error()}
	}
	image := agentImage(deployment)
	if image == "" {
		return &agentInfo{Error: "the serin-agent Deployment has no container"}
	}
	return &agentInfo{Version: imageTag(image)}
}

// imageTag returns the tag of an image reference
// (ghcr.io/serin-dev/serin:v0.3.0@sha256:… → v0.3.0), or the whole reference
// when it has no tag.
func imageTag(image string) string {
	name, _, _ := strings.Cut(image, "@")
	lastSlash := strings.LastIndex(name, "/")
	if colon := strings.LastIndex(name, ":"); colon > lastSlash {
		return name[colon+1:]
	}
	return image
}
