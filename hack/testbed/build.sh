#!/usr/bin/env bash
# Builds the testbed binaries from the Go module proxy, one at a time, into a
# cache outside the clone keyed by component and version. A binary that is
# already cached is never rebuilt, so CI and later runs reuse it.
#
#   hack/testbed/build.sh [component...]   (default: all)
#   prints the cache directory of each component on stdout.
#
# Components: etcd kube-apiserver kube-controller-manager kube-scheduler kwok
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

build() { # build NAME VERSION DIR -- go build args...
	local name=$1 version=$2 moddir=$3; shift 4
	local out="$cache/$name-$version"
	if [[ -x "$out/$name" ]]; then echo "$out"; return; fi
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

# Without the version, the binaries report v0.0.0 and clients refuse them.
k8s_minor=$(cut -d. -f2 <<<"$KUBERNETES_VERSION")
k8s_ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$KUBERNETES_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$k8s_minor"

component() {
	case $1 in
	etcd) build etcd "$ETCD_VERSION" "$here/modules/etcd" -- -ldflags "-s -w" go.etcd.io/etcd/server/v3 ;;
	kube-apiserver | kube-controller-manager | kube-scheduler)
		build "$1" "$KUBERNETES_VERSION" "$here/modules/kubernetes" -- -ldflags "$k8s_ldflags" "k8s.io/kubernetes/cmd/$1" ;;
	kwok) build kwok "$KWOK_VERSION" "$here/modules/kwok" -- -ldflags "-s -w" sigs.k8s.io/kwok/cmd/kwok ;;
	*) log "unknown component $1"; exit 2 ;;
	esac
}

components=("$@")
[[ ${#components[@]} -gt 0 ]] || components=(etcd kube-apiserver kwok kube-controller-manager kube-scheduler)
for c in "${components[@]}"; do component "$c"; done
