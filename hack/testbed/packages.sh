#!/usr/bin/env bash
# Installs the Debian packages the testbed runs: prometheus (a real
# Prometheus that serin queries in the e2e tests), git (Gitea and
# go-git's test servers shell out to it) and chromium (the dashboard's
# browser tests drive it headless). Does nothing when they are there.
set -euo pipefail
missing=()
command -v prometheus >/dev/null 2>&1 || [[ -x /usr/bin/prometheus ]] || missing+=(prometheus)
command -v git >/dev/null 2>&1 || missing+=(git)
command -v chromium >/dev/null 2>&1 || [[ -x /usr/bin/chromium ]] || missing+=(chromium)
[[ ${#missing[@]} -eq 0 ]] && exit 0
echo "testbed-packages: installing ${missing[*]} from Debian" >&2
if [[ $(id -u) -ne 0 ]]; then
	echo "testbed-packages: run as root, or: sudo apt-get install -y ${missing[*]}" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
# The package starts no service here (no init system); the tests run their own.
apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
