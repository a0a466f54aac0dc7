# Builds the serin agent image for the platform of the build, or for several:
#   make docker-build IMG=…
#   docker buildx build --platform linux/amd64,linux/arm64 -t IMG --push .   (make docker-buildx)
# The builder runs on the build machine's platform and cross-compiles (no
# emulation): Go builds for TARGETOS/TARGETARCH, which buildx sets.
FROM --platform=$BUILDPLATFORM golang:1.26 AS builder
ARG TARGETOS=linux
ARG TARGETARCH=amd64
ARG VERSION=dev
ARG COMMIT=
ENV GOTOOLCHAIN=local CGO_ENABLED=0
WORKDIR /workspace
# The api module is wired into the root module by a replace directive.
COPY go.mod go.sum ./
COPY api/go.mod api/go.sum api/
RUN go mod download
COPY . .
RUN GOOS=${TARGETOS} GOARCH=${TARGETARCH} go build -trimpath -ldflags "-s -w -X github.com/serin-dev/serin/internal/version.Version=${VERSION} -X github.com/serin-dev/serin/internal/version.Commit=${COMMIT}" -o serin-agent .

FROM gcr.io/distroless/static:nonroot
COPY --from=builder /workspace/serin-agent /usr/local/bin/serin-agent
USER 65532:65532
ENTRYPOINT ["serin-agent"]
