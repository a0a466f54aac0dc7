# Builds the serin agent image:  make docker-build IMG=…
FROM golang:1.26 AS builder
ARG VERSION=dev
ARG COMMIT=
ENV GOTOOLCHAIN=local CGO_ENABLED=0
WORKDIR /workspace
# The api module is wired into the root module by a replace directive.
COPY go.mod go.sum ./
COPY api/go.mod api/go.sum api/
RUN go mod download
COPY . .
RUN go build -trimpath -ldflags "-s -w -X github.com/serin-dev/serin/internal/version.Version=${VERSION} -X github.com/serin-dev/serin/internal/version.Commit=${COMMIT}" -o serin-agent .

FROM gcr.io/distroless/static:nonroot
COPY --from=builder /workspace/serin-agent /usr/local/bin/serin-agent
USER 65532:65532
ENTRYPOINT ["serin-agent"]
