# taskgate's container image: one static binary, the CA certificates it needs for TLS to AWS and
# Temporal Cloud, nothing else, run as a non-root user.
#
#   docker build --build-arg VERSION=$(git describe --tags --always --dirty) -t taskgate .
#   docker buildx build --platform linux/amd64,linux/arm64 --build-arg VERSION=v1.2.3 -t REGISTRY/taskgate:v1.2.3 --push .
#
# The image runs `taskgate serve --config /etc/taskgate/tools.yaml --http :8080` unless given other
# arguments; mount the mapping there and pass TASKGATE_TOKEN_KEYS (docs/deploy.md, "Container image").

# The build stage is pinned to an exact Go release (the toolchain go.mod asks for or newer). It runs
# on the builder's own platform and cross-compiles, so multi-platform builds need no emulation.
FROM --platform=$BUILDPLATFORM golang:1.26.8-trixie AS build
ARG TARGETOS=linux
ARG TARGETARCH=amd64
# The version `taskgate version` prints.
ARG VERSION=dev
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags "-s -w -X main.version=$VERSION" -o /out/taskgate ./cmd/taskgate

# An empty base: no shell, no package manager, nothing to patch but taskgate itself.
FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/taskgate /taskgate
# Any non-root user: 65532 is the "nonroot" user of distroless images, a common choice for
# Kubernetes runAsUser and ECS user.
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/taskgate"]
CMD ["serve", "--config", "/etc/taskgate/tools.yaml", "--http", ":8080"]
