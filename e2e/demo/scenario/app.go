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

package scenario

import (
	"fmt"
	"strings"
	"time"

	"github.com/serin-dev/serin/internal/testing/testbed"
)

// appPath is the directory of the app in the Git repository, the path of
// the Flux Kustomization.
const appPath = "apps/podinfo"

// appName is the Deployment and the Canary.
const appName = "podinfo"

// appFiles is the app's directory in Git with the image at tag: a
// Deployment without replicas (serin scales it), its Canary, and a
// kustomization.yaml that sets the tag. A release is a commit that changes
// newTag (and, for a release with a bug, the Deployment).
func appFiles(s *settings, tag string, errorPercent int) map[string]string {
	return map[string]string{
		appPath + "/kustomization.yaml": fmt.Sprintf(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: %s
resources:
  - deployment.yaml
  - canary.yaml
images:
  - name: podinfo
    newTag: %s # the released version
`, s.namespace, tag),
		appPath + "/deployment.yaml": deploymentYAML(errorPercent),
		appPath + "/canary.yaml":     canaryYAML(s.interval, s.appHost()),
	}
}

// releaseFiles are the files a release changes: the tag, and the
// Deployment (a release whose code has a bug answers errorPercent % of its
// requests with 500, as the testbed's backends read it from the pod
// template: testbed.ErrorPercentAnnotation).
func releaseFiles(s *settings, tag string, errorPercent int) map[string]string {
	all := appFiles(s, tag, errorPercent)
	files := map[string]string{}
	for _, f := range []string{appPath + "/kustomization.yaml", appPath + "/deployment.yaml"} {
		files[f] = all[f]
	}
	return files
}

// appHost is the app's hostname on the Gateway.
func (s *settings) appHost() string { return appName + "." + s.namespace + ".serin.test" }

func deploymentYAML(errorPercent int) string {
	bug := ""
	if errorPercent > 0 {
		bug = fmt.Sprintf(`
      annotations:
        # this release's bug, as the testbed's backends play it
        %s: "%d"`, testbed.ErrorPercentAnnotation, errorPercent)
	}
	return fmt.Sprintf(deploymentTemplate, bug)
}

const deploymentTemplate = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: podinfo
  labels:
    app: podinfo
spec:
  # no replicas: serin scales this Deployment (the canary) to zero between
  # rollouts, and runs podinfo-primary with the promoted revision.
  selector:
    matchLabels:
      app: podinfo
  template:
    metadata:
      labels:
        app: podinfo%s
    spec:
      containers:
        - name: podinfo
          image: podinfo
          ports:
            - name: http
              containerPort: 9898
`

// canaryYAML shifts Gateway API weights 20, 40, 60 (one step per
// interval), checks the built-in request-success-rate of the canary's
// traffic over the last metricWindow (Traefik's metrics in the agent's
// --metrics-server Prometheus) at every step, rolls back after two failed
// checks, halts a promotion whose primary fails, and then proposes a
// revert in Git.
func canaryYAML(interval time.Duration, host string) string {
	return stageCanaryYAML(interval, host, "[Halted]", "")
}

// stageCanaryYAML is canaryYAML whose revert opens on the phases revertOn
// (a YAML list), followed by more: the lines of spec.gitops.promote or of
// spec.alerts, indented as they go.
func stageCanaryYAML(interval time.Duration, host, revertOn, more string) string {
	return fmt.Sprintf(`apiVersion: serin.dev/v1alpha1
kind: Canary
metadata:
  name: podinfo
spec:
  targetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: podinfo
  progressDeadlineSeconds: 60
  service:
    port: 9898
    targetPort: http
  routing:
    provider: gatewayapi
    gatewayRefs:
      - name: public
        namespace: gateways
    hosts: [%s]
  analysis:
    interval: %s
    threshold: 2
    stepWeight: 20
    maxWeight: 60
    metrics:
      - name: request-success-rate
        thresholdRange:
          min: 99
        interval: %s
  promotion:
    failurePolicy: Halt
  gitops:
    revert:
      on: %s
      mode: PullRequest
%s`, host, interval, metricWindow, revertOn, more)
}

// metricWindow is the range of the success-rate query. Shorter than the
// analysis interval, so that the first check of a release sees only
// requests made after it was applied (Prometheus scrapes every 500ms).
const metricWindow = 2 * time.Second

// frontend is the second service of act 5: a Deployment and its Canary,
// released with podinfo as one CanaryGroup.
const frontend = "frontend"

// groupName is the CanaryGroup of podinfo and its frontend.
const groupName = "shop"

// groupFiles are the app's files with the frontend and the group: podinfo
// at podinfoTag, the frontend at frontendTag answering frontendErrors % of
// its requests with 500.
func groupFiles(s *settings, podinfoTag, frontendTag string, frontendErrors int) map[string]string {
	files := appFiles(s, podinfoTag, 0)
	files[appPath+"/kustomization.yaml"] = fmt.Sprintf(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: %s
resources:
  - deployment.yaml
  - canary.yaml
  - frontend.yaml
  - group.yaml
images:
  - name: podinfo
    newTag: %s # the released version
  - name: frontend
    newTag: %s
`, s.namespace, podinfoTag, frontendTag)
	deployment := strings.ReplaceAll(deploymentYAML(frontendErrors), appName, frontend)
	canary := strings.ReplaceAll(canaryYAML(s.interval, s.frontendHost()), appName, frontend)
	files[appPath+"/frontend.yaml"] = deployment + "---\n" + canary
	files[appPath+"/group.yaml"] = fmt.Sprintf(`apiVersion: serin.dev/v1alpha1
kind: CanaryGroup
metadata:
  name: %s
spec:
  # released as one: they step together, and either's failure rolls both back
  members:
    - name: %s
    - name: %s
`, groupName, appName, frontend)
	return files
}

// frontendHost is the frontend's hostname on the Gateway.
func (s *settings) frontendHost() string { return frontend + "." + s.namespace + ".serin.test" }

// productionPath is production's directory in the Git repository, the
// path of its Flux Kustomization (act 6).
const productionPath = "production/podinfo"

// productionStage is the name of the stage staging's Canary promotes to.
const productionStage = "production"

// Names of the Flux Provider through which production's Canary posts its
// verdicts as Gitea commit statuses, and of the Secret with its token.
const (
	commitStatusProvider = "commit-status"
	commitStatusToken    = "commit-status-token"
)

// productionNamespace is production's namespace, next to the app's,
// which plays staging.
func (s *settings) productionNamespace() string { return s.namespace + "-production" }

// productionHost is production's hostname on the Gateway.
func (s *settings) productionHost() string {
	return appName + "." + s.productionNamespace() + ".serin.test"
}

// soak is how long staging's promoted primary keeps passing its checks
// before serin writes the promotion: two analysis intervals.
func (s *settings) soak() time.Duration { return 2 * s.interval }

// promotingFiles are the app's files of act 5 with podinfo at podinfoTag,
// the frontend back at v1 (what its primary runs), and podinfo's Canary
// promoting what it promotes to production after the soak.
func promotingFiles(s *settings, podinfoTag string) map[string]string {
	files := groupFiles(s, podinfoTag, "v1", 0)
	files[appPath+"/canary.yaml"] = stageCanaryYAML(s.interval, s.appHost(), "[Halted]", fmt.Sprintf(`    promote:
      - stage: %s
        path: ./%s
        canary:
          name: %s
          namespace: %s
        soak: %s
`, productionStage, productionPath, appName, s.productionNamespace(), s.soak()))
	return files
}

// productionFiles are production's directory with podinfo at tag: the
// app's Deployment, a Canary like staging's that reverts on Failed too
// and posts its verdicts as commit statuses through the Provider of type
// gitea in its spec.alerts, and that Provider (its token is a Secret the
// demo creates, never in Git).
func productionFiles(s *settings, tag, repositoryURL string) map[string]string {
	ns := s.productionNamespace()
	return map[string]string{
		productionPath + "/kustomization.yaml": fmt.Sprintf(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: %s
resources:
  - deployment.yaml
  - canary.yaml
  - provider.yaml
images:
  - name: podinfo
    newTag: %s # the released version
`, ns, tag),
		productionPath + "/deployment.yaml": deploymentYAML(0),
		productionPath + "/canary.yaml": stageCanaryYAML(s.interval, s.productionHost(), "[Failed, Halted]", fmt.Sprintf(`  alerts:
    - name: git
      providerRef:
        name: %s
`, commitStatusProvider)),
		productionPath + "/provider.yaml": fmt.Sprintf(`apiVersion: notification.toolkit.fluxcd.io/v1beta3
kind: Provider
metadata:
  name: %s
spec:
  # serin posts the Canary's verdicts on each commit it rolls out
  type: gitea
  address: %s
  secretRef:
    name: %s
`, commitStatusProvider, repositoryURL, commitStatusToken),
	}
}
