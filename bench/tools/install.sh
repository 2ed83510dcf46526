#!/usr/bin/env bash
#
# install.sh - build the lab's pinned tools into the project-local .tools/bin (gitignored).
#
# vegeta: the open-loop load generator (constant arrival rate, latency from the *intended* send
# time: no coordinated omission, lab-notes traps 3 and 21). No registry here ships a binary, so it
# is built from the Go module proxy at the version pinned in bench/tools/vegeta/go.mod + go.sum.
# (`go install pkg@version` would also ask the proxy for the module's version list, which it refuses.)
#
# USAGE: bench/tools/install.sh vegeta     prints the tool's path; builds it once (~1 min)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BIN="$ROOT/.tools/bin"

case "${1:-}" in
    vegeta)
        dir="$ROOT/bench/tools/vegeta"
        version=$(sed -n 's/^require github.com\/tsenart\/vegeta\/v12 \(v[0-9.]*\)$/\1/p' "$dir/go.mod")
        out="$BIN/vegeta-$version"
        if [[ ! -x "$out" ]]; then
            command -v go >/dev/null || {
                echo "ERROR: vegeta $version is built from source and needs Go 1.22+: install it (Debian: apt-get install -y golang-go), then run: bench/tools/install.sh vegeta" >&2
                exit 1
            }
            echo "building vegeta $version into $BIN (once)" >&2
            mkdir -p "$BIN"
            (cd "$dir" && GOFLAGS=-mod=mod go build -o "$out.tmp" github.com/tsenart/vegeta/v12) \
                || { echo "ERROR: building vegeta failed; run: (cd bench/tools/vegeta && go build github.com/tsenart/vegeta/v12)" >&2; exit 1; }
            mv "$out.tmp" "$out"
        fi
        ln -sfn "vegeta-$version" "$BIN/vegeta"
        echo "$BIN/vegeta"
        ;;
    *)
        echo "ERROR: unknown tool '${1:-}'" >&2
        echo "Usage: bench/tools/install.sh vegeta" >&2
        exit 2
        ;;
esac
