#!/usr/bin/env bash
# Builds the container function (tests/container-function/*.go): a
# composition function on grpc-go for testing xfn's container runtime,
# statically linked (CGO_ENABLED=0), from Debian's packages only.
#
# tests/go-grpc-stubs.sh installs the Debian packages it needs if missing
# (as root, or with sudo) and generates the stubs from proto/proto/fn/v1;
# the function builds in GOPATH mode with no module proxy. Idempotent;
# prints the binary's path on stdout:
# $CARGO_TARGET_DIR/container-function/xfn-container-function (target/ by
# default).
#
# Usage: build.sh [--no-install]   (--no-install: fail if a tool is missing)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
out="$target/container-function"

stubs_flags=()
if [ "${1:-}" = "--no-install" ]; then
    stubs_flags=(--no-install)
fi

# golang.org/x/sys/unix (the probe's rlimits) comes with
# golang-google-grpc-dev, which depends on golang-golang-x-sys-dev.
"$root/tests/go-grpc-stubs.sh" "${stubs_flags[@]}" "$out/gopath" xfn.dev/containerfn/fnv1
mkdir -p "$out/cache"
env GOPATH="$out/gopath:/usr/share/gocode" GO111MODULE=off GOPROXY=off GOFLAGS= \
    GOCACHE="$out/cache" CGO_ENABLED=0 \
    go build -trimpath -ldflags="-s -w" -o "$out/xfn-container-function" "$here"/*.go
echo "$out/xfn-container-function"
