#!/usr/bin/env bash
# Runs the README's two commands the way a stranger does on a fresh machine:
# a fresh clone of this repository's HEAD, an empty Go module cache and build
# cache, an empty testbed cache (unless --keep-testbed-cache), and the Debian
# packages the testbed needs removed where this script can do so (root and
# apt), so that `make` has to install them again. Prints the wall time of
# each command and exits non-zero when one fails.
#
#   hack/fresh-machine.sh [--keep-testbed-cache] [--keep-packages] [--only demo|test]
#
# With an empty testbed cache the first command builds every testbed binary
# from the Go module proxy (the longest part: see README.md for the times).
set -euo pipefail

keep_testbed=false keep_packages=false only=""
while [[ $# -gt 0 ]]; do
	case $1 in
	--keep-testbed-cache) keep_testbed=true ;;
	--keep-packages) keep_packages=true ;;
	--only) only=$2; shift ;;
	-h | --help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "fresh-machine: unknown argument $1" >&2; exit 2 ;;
	esac
	shift
done

repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/serin-fresh.XXXX")
cleanup() {
	# The module cache is read-only by design.
	chmod -R u+w "$work" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
say() { echo "fresh-machine: $*" >&2; }

export GOMODCACHE="$work/gomodcache" GOCACHE="$work/gocache"
unset GOFLAGS KUBEBUILDER_ASSETS
if ! $keep_testbed; then
	export SERIN_TESTBED_CACHE="$work/testbed-cache"
fi

if ! $keep_packages; then
	if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null && dpkg -s prometheus >/dev/null 2>&1; then
		say "removing Debian's prometheus (make must install it again)"
		DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq prometheus >/dev/null
	fi
fi

say "cloning $(git -C "$repo" rev-parse --short HEAD) into $work/serin (uncommitted changes are not part of it)"
git clone -q --no-local "$repo" "$work/serin"
cd "$work/serin"
say "GOMODCACHE=$GOMODCACHE GOCACHE=$GOCACHE SERIN_TESTBED_CACHE=${SERIN_TESTBED_CACHE:-(kept: default)}"

declare -A took
status=0
for cmd in demo test; do
	[[ -z $only || $only == "$cmd" ]] || continue
	say "running: make $cmd"
	start=$SECONDS
	if make "$cmd"; then result=ok; else result=FAILED; status=1; fi
	took[$cmd]="$((SECONDS - start))s $result"
	say "make $cmd: ${took[$cmd]}"
	[[ $status -eq 0 ]] || break
done

echo
echo "fresh machine (testbed cache $($keep_testbed && echo kept || echo empty), Go caches empty):"
for cmd in demo test; do
	[[ -n ${took[$cmd]:-} ]] && echo "  make $cmd: ${took[$cmd]}"
done
exit $status
