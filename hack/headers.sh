#!/usr/bin/env bash
# Checks that every Go file of the project starts with the licence header of
# hack/boilerplate.go.txt (the year may differ); with --fix, adds it where it
# is missing. The wrapper modules under hack/testbed/modules are not ours.
set -euo pipefail
cd "$(dirname "$0")/.."

boilerplate=hack/boilerplate.go.txt
fix=false
[ "${1:-}" = "--fix" ] && fix=true

# The header without its copyright year, to compare against.
want=$(sed -E 's/Copyright [0-9]{4} /Copyright YEAR /' "$boilerplate")
lines=$(wc -l <"$boilerplate")

missing=()
while IFS= read -r f; do
  start=1
  # A build constraint has to come first; the header follows it.
  case "$(sed -n 1p "$f")" in //go:build*) start=3 ;; esac
  got=$(sed -n "${start},$((start + lines - 1))p" "$f" | sed -E 's/Copyright [0-9]{4} /Copyright YEAR /')
  [ "$got" = "$want" ] && continue
  if $fix; then
    tmp=$(mktemp)
    { if [ "$start" = 3 ]; then head -n2 "$f"; fi
      cat "$boilerplate"; echo
      tail -n +"$start" "$f"; } >"$tmp"
    cat "$tmp" >"$f" && rm -f "$tmp"
  else
    missing+=("$f")
  fi
done < <(git ls-files --cached --others --exclude-standard '*.go' | grep -v '^hack/testbed/modules/')

if [ "${#missing[@]}" -gt 0 ]; then
  echo "missing the licence header of $boilerplate (run 'hack/headers.sh --fix'):"
  printf '  %s\n' "${missing[@]}"
  exit 1
fi
