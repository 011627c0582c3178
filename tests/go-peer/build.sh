#!/usr/bin/env bash
# Builds the Go peer of the benchmarks (tests/go-peer/*.go): a
# FunctionRunnerService server on grpc-go, from Debian's packages only.
#
# Installs golang-go, golang-google-grpc-dev, golang-google-protobuf-dev,
# protobuf-compiler, protoc-gen-go and protoc-gen-go-grpc if missing (as
# root, or with sudo), generates the stubs from proto/proto/fn/v1 and builds
# in GOPATH mode with no module proxy. Idempotent; prints the binary's path
# on stdout: $CARGO_TARGET_DIR/go-peer/xfn-go-peer (target/ by default).
#
# Usage: build.sh [--no-install]   (--no-install: fail if a tool is missing)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
out="$target/go-peer"

install=1
if [ "${1:-}" = "--no-install" ]; then
    install=0
fi

# Debian package -> what shows it is installed.
declare -A wanted=(
    [golang-go]=/usr/bin/go
    [protobuf-compiler]=/usr/bin/protoc
    [protoc-gen-go]=/usr/bin/protoc-gen-go
    [protoc-gen-go-grpc]=/usr/bin/protoc-gen-go-grpc
    [golang-google-grpc-dev]=/usr/share/gocode/src/google.golang.org/grpc/server.go
    [golang-google-protobuf-dev]=/usr/share/gocode/src/google.golang.org/protobuf/proto/encode.go
)
missing=()
for package in "${!wanted[@]}"; do
    [ -e "${wanted[$package]}" ] || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$install" -eq 0 ]; then
        echo "go peer: missing Debian packages: ${missing[*]}" >&2
        exit 1
    fi
    "$here/../apt-install.sh" "${missing[@]}"
fi

# GOPATH mode: the stubs' package under our own GOPATH, everything else
# from Debian's /usr/share/gocode. No modules, no proxy, no network.
gopath="$out/gopath"
stubs="$gopath/src/xfn.dev/gopeer/fnv1"
mkdir -p "$stubs" "$out/cache"
proto="fn/v1/run_function.proto"
import="xfn.dev/gopeer/fnv1"
protoc --proto_path="$root/proto/proto" --proto_path=/usr/include \
    --go_out="$stubs" --go_opt=paths=source_relative --go_opt="M$proto=$import" \
    --go-grpc_out="$stubs" --go-grpc_opt=paths=source_relative --go-grpc_opt="M$proto=$import" \
    "$proto"
# source_relative keeps the proto's directories; the package is flat.
mv -f "$stubs"/fn/v1/*.go "$stubs"/
rm -rf "$stubs/fn"

env GOPATH="$gopath:/usr/share/gocode" GO111MODULE=off GOPROXY=off GOFLAGS= \
    GOCACHE="$out/cache" CGO_ENABLED=0 \
    go build -o "$out/xfn-go-peer" "$here"/*.go
echo "$out/xfn-go-peer"
