#!/usr/bin/env bash
# Builds the Go peer of the benchmarks (tests/go-peer/*.go): a
# FunctionRunnerService server on grpc-go, from Debian's packages only.
#
# tests/go-grpc-stubs.sh installs the Debian packages it needs if missing
# (as root, or with sudo) and generates the stubs from proto/proto/fn/v1;
# the peer builds in GOPATH mode with no module proxy. Idempotent; prints
# the binary's path on stdout: $CARGO_TARGET_DIR/go-peer/xfn-go-peer
# (target/ by default).
#
# Usage: build.sh [--no-install]   (--no-install: fail if a tool is missing)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
out="$target/go-peer"

stubs_flags=()
if [ "${1:-}" = "--no-install" ]; then
    stubs_flags=(--no-install)
fi

# GOPATH mode: the stubs' package under our own GOPATH, everything else
# from Debian's /usr/share/gocode. No modules, no proxy, no network.
"$root/tests/go-grpc-stubs.sh" "${stubs_flags[@]}" "$out/gopath" xfn.dev/gopeer/fnv1
mkdir -p "$out/cache"
env GOPATH="$out/gopath:/usr/share/gocode" GO111MODULE=off GOPROXY=off GOFLAGS= \
    GOCACHE="$out/cache" CGO_ENABLED=0 \
    go build -o "$out/xfn-go-peer" "$here"/*.go
echo "$out/xfn-go-peer"
