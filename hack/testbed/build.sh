#!/usr/bin/env bash
# Builds the testbed binaries from the Go module proxy, one at a time, into a
# cache outside the clone keyed by component and version. A binary that is
# already cached is never rebuilt, so CI and later runs reuse it.
#
#   hack/testbed/build.sh [component...]   (default: all)
#   prints the cache directory of each component on stdout.
#
# Components: etcd kube-apiserver kube-controller-manager kube-scheduler kwok
#             notification-controller
#             gitea source-controller kustomize-controller helm-controller
#             traefik
#             flagger flagger-previous flagger-vX.Y.Z (only for `make bench`:
#             the side-by-side comparison; versions.env pins the first two)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
source "$here/versions.env"
cache=${SERIN_TESTBED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/serin-testbed}
mkdir -p "$cache"
export GOTOOLCHAIN=local GOFLAGS=-mod=mod

log() { echo "testbed-build: $*" >&2; }

# One build at a time across every process on this machine: a Kubernetes link
# peaks at ~2.5 GB and the machine has 2 cores.
exec 9>"$cache/.build.lock"

# With SERIN_TESTBED_DRY_RUN set, nothing is built: each component that is
# not cached yet is printed as "missing NAME" (what `make demo` announces
# before it builds).
dry_run=${SERIN_TESTBED_DRY_RUN:-}

build() { # build NAME VERSION DIR -- go build args...
	local name=$1 version=$2 moddir=$3; shift 4
	local out="$cache/$name-$version"
	if [[ -x "$out/$name" ]]; then [[ -n $dry_run ]] || echo "$out"; return; fi
	if [[ -n $dry_run ]]; then echo "missing $name"; return; fi
	flock 9
	if [[ -x "$out/$name" ]]; then flock -u 9; echo "$out"; return; fi
	log "building $name $version (cached in $out afterwards)"
	local start=$SECONDS tmp
	tmp=$(mktemp -d "$cache/.tmp-$name.XXXX")
	(cd "$moddir" && go build -trimpath -o "$tmp/$name" "$@")
	mkdir -p "$out" && mv "$tmp/$name" "$out/$name" && rmdir "$tmp"
	log "built $name in $((SECONDS - start))s"
	flock -u 9
	echo "$out"
}

# build_module NAME VERSION MODULE -- go build args...
# Builds a command whose module has to be the main module: Flux's
# source-controller and kustomize-controller (their ./api is not in the module
# zip, so `go install` fails on the replace) and Gitea. The module is copied
# out of the module cache and, when hack/testbed/modules/NAME/go.mod exists,
# that go.mod and its go.sum (the replaces that make it build here, with
# pinned checksums) replace the module's own. The directories of the module
# named in $KEEP are copied next to the binary under NAME-static/ (Gitea's
# templates, the controllers' CRDs), also when the binary is already cached.
# $PREPARE, when set, runs in the copied module before the build.
build_module() {
	local name=$1 version=$2 module=$3; shift 4
	local out="$cache/$name-$version" d
	built() {
		[[ -x "$out/$name" ]] || return 1
		for d in ${KEEP:-}; do [[ -d "$out/$name-static/$(basename "$d")" ]] || return 1; done
	}
	if built; then [[ -n $dry_run ]] || echo "$out"; return; fi
	if [[ -n $dry_run ]]; then echo "missing $name"; return; fi
	flock 9
	if built; then flock -u 9; echo "$out"; return; fi
	local start=$SECONDS tmp src
	tmp=$(mktemp -d "$cache/.tmp-$name.XXXX")
	src=$(cd "$tmp" && go mod download -json "$module@$version" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
	[[ -n "$src" ]] || { log "cannot download $module@$version"; exit 1; }
	mkdir -p "$out"
	for d in ${KEEP:-}; do
		mkdir -p "$out/$name-static" && rm -rf "$out/$name-static/$(basename "$d")" && cp -r "$src/$d" "$out/$name-static/"
		chmod -R u+w "$out/$name-static"
	done
	if [[ ! -x "$out/$name" ]]; then
		log "building $name $version from $module (cached in $out afterwards)"
		cp -r "$src" "$tmp/src" && chmod -R u+w "$tmp/src"
		if [[ -f "$here/modules/$name/go.mod" ]]; then
			cp "$here/modules/$name/go.mod" "$here/modules/$name/go.sum" "$tmp/src/"
		fi
		if [[ -n ${PREPARE:-} ]]; then (cd "$tmp/src" && eval "$PREPARE"); fi
		(cd "$tmp/src" && go build -trimpath -o "$tmp/$name" "$@")
		mv "$tmp/$name" "$out/$name"
		log "built $name in $((SECONDS - start))s"
	fi
	rm -rf "$tmp"
	flock -u 9
	echo "$out"
}

# Without the version, the binaries report v0.0.0 and clients refuse them.
k8s_minor=$(cut -d. -f2 <<<"$KUBERNETES_VERSION")
k8s_ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$KUBERNETES_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$k8s_minor"

flagger() { # flagger VERSION: Flagger's binary and CRDs, cached by version.
	(
		export KEEP=artifacts/flagger
		build_module flagger "$1" github.com/fluxcd/flagger -- -ldflags "-s -w" ./cmd/flagger
	)
}

component() {
	case $1 in
	etcd) build etcd "$ETCD_VERSION" "$here/modules/etcd" -- -ldflags "-s -w" go.etcd.io/etcd/server/v3 ;;
	kube-apiserver | kube-controller-manager | kube-scheduler)
		build "$1" "$KUBERNETES_VERSION" "$here/modules/kubernetes" -- -ldflags "$k8s_ldflags" "k8s.io/kubernetes/cmd/$1" ;;
	kwok) build kwok "$KWOK_VERSION" "$here/modules/kwok" -- -ldflags "-s -w" sigs.k8s.io/kwok/cmd/kwok ;;
	notification-controller)
		build notification-controller "$NOTIFICATION_CONTROLLER_VERSION" "$here/modules/notification-controller" -- \
			-ldflags "-s -w" github.com/fluxcd/notification-controller ;;
	source-controller | kustomize-controller) (
		export KEEP=config/crd
		build_module "$1" "$FLUX_CONTROLLERS_VERSION" "github.com/fluxcd/$1" -- -ldflags "-s -w" .
	) ;;
	helm-controller) (
		# Flux's helm-controller (HelmReleases), the same recipe: its ./api is
		# replaced by the proxy's version of the same tag.
		export KEEP=config/crd
		build_module helm-controller "$HELM_CONTROLLER_VERSION" github.com/fluxcd/helm-controller -- -ldflags "-s -w" .
	) ;;
	gitea) (
		export CGO_ENABLED=1 KEEP="templates options public"
		build_module gitea "$GITEA_VERSION" code.gitea.io/gitea -- \
			-tags "sqlite sqlite_unlock_notify" -ldflags "-s -w -X \"main.Version=${GITEA_VERSION#v}\"" .
	) ;;
	traefik) (
		# The web UI's assets are built with npm and are not in the module
		# zip; the testbed runs Traefik with the dashboard off, so an empty
		# page satisfies its //go:embed.
		export PREPARE='mkdir -p webui/static && echo "<!-- dashboard not built -->" > webui/static/index.html'
		build_module traefik "$TRAEFIK_VERSION" github.com/traefik/traefik/v3 -- \
			-ldflags "-s -w -X github.com/traefik/traefik/v3/pkg/version.Version=$TRAEFIK_VERSION" ./cmd/traefik
	) ;;
	flagger) flagger "$FLAGGER_VERSION" ;;
	flagger-previous) flagger "$FLAGGER_PREVIOUS_VERSION" ;;
	flagger-v*) flagger "${1#flagger-}" ;;
	*) log "unknown component $1"; exit 2 ;;
	esac
}

components=("$@")
[[ ${#components[@]} -gt 0 ]] || components=(etcd kube-apiserver kwok kube-controller-manager kube-scheduler notification-controller source-controller kustomize-controller helm-controller gitea traefik)
for c in "${components[@]}"; do component "$c"; done
