#!/usr/bin/env bash
# Builds (when missing) every testbed binary and gathers them into one
# directory of symlinks, printed on stdout: the KUBEBUILDER_ASSETS of envtest
# and the binary directory of the full testbed (internal/testing/testbed).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/versions.env"
cache=${SERIN_TESTBED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/serin-testbed}
assets="$cache/assets/k8s-$KUBERNETES_VERSION-etcd-$ETCD_VERSION-kwok-$KWOK_VERSION"
mkdir -p "$assets"
while read -r dir; do
	for bin in "$dir"/*; do ln -sf "$bin" "$assets/$(basename "$bin")"; done
done < <("$here/build.sh" "$@")
echo "$assets"
