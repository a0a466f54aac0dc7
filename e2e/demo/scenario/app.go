package scenario

import (
	"fmt"
	"time"
)

// appPath is the directory of the app in the Git repository, the path of
// the Flux Kustomization.
const appPath = "apps/podinfo"

// appName is the Deployment and the Canary.
const appName = "podinfo"

// appFiles is the app's directory in Git with the image at tag: a
// Deployment without replicas (serin scales it), its Canary, the
// MetricTemplate the Canary checks, and a kustomization.yaml that sets the
// tag. A release is a commit that changes newTag.
func appFiles(s *settings, tag string) map[string]string {
	return map[string]string{
		appPath + "/kustomization.yaml": fmt.Sprintf(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: %s
resources:
  - metrictemplate.yaml
  - deployment.yaml
  - canary.yaml
images:
  - name: podinfo
    newTag: %s # the released version
`, s.namespace, tag),
		appPath + "/deployment.yaml":     deploymentYAML,
		appPath + "/canary.yaml":         canaryYAML(s.interval),
		appPath + "/metrictemplate.yaml": metricTemplateYAML(s.prometheusURL),
	}
}

// kustomizationFile is the file a release changes.
func kustomizationFile(s *settings, tag string) map[string]string {
	f := appPath + "/kustomization.yaml"
	return map[string]string{f: appFiles(s, tag)[f]}
}

const deploymentYAML = `apiVersion: apps/v1
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
        app: podinfo
    spec:
      containers:
        - name: podinfo
          image: podinfo
          ports:
            - name: http
              containerPort: 9898
`

// canaryYAML shifts Gateway API weights 20, 40, 60 (one step per
// interval), checks the error rate of the last metricWindow through
// Prometheus at every step, rolls back after two failed checks, halts a
// promotion whose primary fails, and then proposes a revert in Git.
func canaryYAML(interval time.Duration) string {
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
  analysis:
    interval: %s
    threshold: 2
    stepWeight: 20
    maxWeight: 60
    metrics:
      - name: error-rate
        templateRef:
          name: error-rate
        thresholdRange:
          max: 1
        interval: %s
  promotion:
    failurePolicy: Halt
  gitops:
    revert:
      on: [Halted]
      mode: PullRequest
`, interval, metricWindow)
}

// metricWindow is the range of the error-rate query. Shorter than the
// analysis interval, so that the first check of a release sees only
// requests made after it was applied (Prometheus scrapes every 500ms).
const metricWindow = 2 * time.Second

// metricTemplateYAML is the percentage of requests answered with 5xx.
func metricTemplateYAML(prometheusURL string) string {
	return fmt.Sprintf(`apiVersion: serin.dev/v1alpha1
kind: MetricTemplate
metadata:
  name: error-rate
spec:
  provider:
    type: prometheus
    address: %s
  query: |
    100 - 100 * sum(rate(http_requests_total{namespace="{{ namespace }}",app="{{ target }}",code!~"5.."}[{{ interval }}]))
      / sum(rate(http_requests_total{namespace="{{ namespace }}",app="{{ target }}"}[{{ interval }}]))
`, prometheusURL)
}
