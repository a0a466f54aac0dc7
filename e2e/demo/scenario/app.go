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
      on: [Halted]
      mode: PullRequest
`, host, interval, metricWindow)
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
