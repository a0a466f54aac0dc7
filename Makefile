# serin — the one gate is `make test`; see CONTRIBUTING.md.
SHELL := /usr/bin/env bash -o pipefail
export GOTOOLCHAIN := local
export GOFLAGS := -mod=mod

IMAGE_REPO ?= ghcr.io/serin-dev/serin
IMG ?= $(IMAGE_REPO):latest
# A release's semantic version (vMAJOR.MINOR.PATCH[-PRERELEASE]) when the
# commit is tagged and the tree clean; otherwise a dev build's description.
VERSION ?= $(shell git describe --tags --match 'v*' --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
# The time stamp of the release archives' files: the commit's.
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)

# Tools and testbed binaries are cached outside the clone, keyed by version,
# so CI and later runs reuse them.
SERIN_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)
export SERIN_TESTBED_CACHE ?= $(SERIN_CACHE)/serin-testbed
TOOLS_DIR := $(SERIN_TESTBED_CACHE)/tools

CONTROLLER_TOOLS_VERSION := v0.21.0
CONTROLLER_GEN := $(TOOLS_DIR)/controller-gen-$(CONTROLLER_TOOLS_VERSION)
GOTESTSUM_VERSION := v1.13.0
GOTESTSUM := $(TOOLS_DIR)/gotestsum-$(GOTESTSUM_VERSION)
GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT := $(TOOLS_DIR)/golangci-lint-$(GOLANGCI_LINT_VERSION)

LDFLAGS := -X github.com/serin-dev/serin/internal/version.Version=$(VERSION) -X github.com/serin-dev/serin/internal/version.Commit=$(COMMIT)

.PHONY: all
all: build

##@ Development

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate deepcopy functions.
	cd api && $(CONTROLLER_GEN) object:headerFile=../hack/boilerplate.go.txt paths=./...

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate CRDs and RBAC.
	cd api && $(CONTROLLER_GEN) crd:allowDangerousTypes=true paths=./... output:crd:artifacts:config=../config/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=serin-manager paths=./controllers/... output:rbac:artifacts:config=config/rbac
	@# The Helm chart installs the same CRDs, alerts and dashboard (hack/charttest fails when they differ).
	rm -f charts/serin/files/crds/*.yaml && cp config/crd/bases/*.yaml charts/serin/files/crds/
	cp config/prometheus/serin-alerts.yaml config/grafana/serin-dashboard.json charts/serin/files/

.PHONY: fmt
fmt: ## Run gofmt on all Go files.
	gofmt -l -w $$(git ls-files '*.go' | grep -v '^hack/testbed/modules/') api

.PHONY: vet
vet: ## Run go vet on the three modules.
	go vet ./...
	cd api && go vet ./...
	cd hack/charttest && go vet ./...

.PHONY: tidy
tidy: ## Tidy the three modules.
	cd api && go mod tidy
	go mod tidy
	cd hack/charttest && go mod tidy

.PHONY: headers
headers: ## Add the licence header of hack/boilerplate.go.txt to Go files that lack it.
	hack/headers.sh --fix

.PHONY: lint
lint: $(GOLANGCI_LINT) ## Run golangci-lint (.golangci.yml) on the three modules.
	$(GOLANGCI_LINT) run ./...
	cd api && $(GOLANGCI_LINT) run --config ../.golangci.yml ./...
	cd hack/charttest && $(GOLANGCI_LINT) run --config ../../.golangci.yml ./...

.PHONY: verify
verify: generate manifests lint ## Fail when generated files are stale, go.mod is untidy, a Go file lacks its licence header or is not gofmt'ed, or the linter objects.
	@git diff --exit-code -- api/v1alpha1/zz_generated.deepcopy.go config/crd config/rbac charts/serin/files \
		|| { echo "generated files are stale: run 'make generate manifests' and commit"; exit 1; }
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^hack/testbed/modules/')); \
		[ -z "$$unformatted" ] || { echo "not gofmt'ed (run 'make fmt'):"; echo "$$unformatted"; exit 1; }
	@hack/headers.sh
	@go mod tidy -diff || { echo "go.mod/go.sum are not tidy: run 'make tidy' and commit"; exit 1; }
	@cd api && go mod tidy -diff || { echo "api/go.mod/go.sum are not tidy: run 'make tidy' and commit"; exit 1; }
	@cd hack/charttest && go mod tidy -diff || { echo "hack/charttest/go.mod/go.sum are not tidy: run 'make tidy' and commit"; exit 1; }

##@ Test

.PHONY: test
test: verify vet testbed-binaries $(GOTESTSUM) ## Everything: generate check, vet, unit, envtest and e2e tests.
	cd api && go test -count=1 ./...
	@# The Helm chart (its own module): rendering, drift, and installed on the testbed.
	cd hack/charttest && KUBEBUILDER_ASSETS=$$(../testbed/assets.sh) $(GOTESTSUM) --format testname -- -count=1 -timeout 10m ./...
	KUBEBUILDER_ASSETS=$$(hack/testbed/assets.sh) $(GOTESTSUM) --format testname -- -count=1 -timeout 60m ./...

.PHONY: test-unit
test-unit: ## Unit tests only (no cluster).
	go test -count=1 -short ./...
	cd hack/charttest && go test -count=1 -short ./...

.PHONY: bench
bench: testbed-binaries ## Benchmarks on the local testbed, side by side with Flagger, printed as tables (docs/performance.md; the record in bench/results/).
	hack/testbed/build.sh flagger flagger-previous >/dev/null
	KUBEBUILDER_ASSETS=$$(hack/testbed/assets.sh) go test -run '^$$' -bench . -benchtime 1x -timeout 300m ./gitops/... ./e2e/...

##@ Testbed

.PHONY: testbed-packages
testbed-packages: ## Install the Debian packages the testbed runs (Prometheus, git, Chromium) when missing.
	hack/testbed/packages.sh

.PHONY: testbed-binaries
testbed-binaries: testbed-packages ## Build (once, cached) etcd, the Kubernetes control plane, kwok, Flux's controllers, Gitea and Traefik.
	hack/testbed/build.sh >/dev/null

.PHONY: testbed-up
testbed-up: testbed-binaries ## Start the local testbed; writes .testbed/kubeconfig.
	go build -o bin/serin-testbed ./internal/testing/testbed/cmd/serin-testbed
	KUBEBUILDER_ASSETS=$$(hack/testbed/assets.sh) bin/serin-testbed up --dir .testbed

.PHONY: testbed-down
testbed-down: ## Stop the local testbed.
	go build -o bin/serin-testbed ./internal/testing/testbed/cmd/serin-testbed
	bin/serin-testbed down --dir .testbed

.PHONY: run
run: ## Run the agent from this tree against the testbed of `make testbed-up`.
	KUBECONFIG=.testbed/kubeconfig go run . --metrics-addr=127.0.0.1:18080 --health-addr=127.0.0.1:19440 --log-encoding=console \
		--metrics-server=$$(cat .testbed/prometheus-url) --data-plane=traefik

.PHONY: demo
demo: testbed-packages ## serin's main job on the local testbed: six acts, each a Git commit (see README).
	@echo "► compiling the demo (the first time: a few minutes)"
	@go build -o bin/serin-demo ./e2e/demo & pid=$$!; s=0; \
		while kill -0 $$pid 2>/dev/null; do sleep 1; s=$$((s + 1)); \
			[ $$((s % 15)) -ne 0 ] || echo "  … still compiling ($${s}s)"; done; \
		wait $$pid
	@bin/serin-demo

##@ Build

.PHONY: build
build: ## Build the agent and the CLI into bin/.
	go build -ldflags "$(LDFLAGS)" -o bin/serin-agent .
	go build -ldflags "$(LDFLAGS)" -o bin/serin ./cmd/serin

.PHONY: release
release: ## Build the release into dist/: agent and CLI archives for linux/darwin/windows × amd64/arm64, install.yaml, the Helm chart, checksums.txt.
	SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) go run ./hack/release --version=$(VERSION) --ldflags="$(LDFLAGS)" --image=$(IMAGE_REPO) --dist=dist

.PHONY: docker-build
docker-build: ## Build the container image for this machine's platform.
	docker build --build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) -t $(IMG) .

# The platforms of the released image.
IMAGE_PLATFORMS ?= linux/amd64,linux/arm64

.PHONY: docker-buildx
docker-buildx: ## Build the image for IMAGE_PLATFORMS (linux/amd64, linux/arm64) with docker buildx and push it.
	docker buildx build --platform $(IMAGE_PLATFORMS) --build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) -t $(IMG) --push .

.PHONY: deploy
deploy: ## Install CRDs, RBAC and the agent into the current cluster.
	kubectl apply -k config/default

$(CONTROLLER_GEN):
	@mkdir -p $(TOOLS_DIR)
	GOBIN=$(TOOLS_DIR)/.gobin go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_TOOLS_VERSION)
	mv $(TOOLS_DIR)/.gobin/controller-gen $@

$(GOLANGCI_LINT):
	@mkdir -p $(TOOLS_DIR)
	GOBIN=$(TOOLS_DIR)/.gobin go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(TOOLS_DIR)/.gobin/golangci-lint $@

$(GOTESTSUM):
	@mkdir -p $(TOOLS_DIR)
	GOBIN=$(TOOLS_DIR)/.gobin go install gotest.tools/gotestsum@$(GOTESTSUM_VERSION)
	mv $(TOOLS_DIR)/.gobin/gotestsum $@

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_-]+:.*?##/ { printf "  %-18s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)
