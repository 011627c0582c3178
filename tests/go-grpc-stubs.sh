#!/usr/bin/env bash
# Generates the Go stubs of FunctionRunnerService (proto/proto/fn/v1) for a
# grpc-go server built from Debian's packages only, in GOPATH mode: the Go
# peer (tests/go-peer) and the container function (tests/container-function)
# share it.
#
# Installs golang-go, golang-google-grpc-dev, golang-google-protobuf-dev,
# protobuf-compiler, protoc-gen-go and protoc-gen-go-grpc if missing (as
# root, or with sudo, through apt-install.sh), then writes the stubs as the
# flat package IMPORT under GOPATH/src. Build against them with
# GOPATH="GOPATH:/usr/share/gocode" GO111MODULE=off GOPROXY=off: no modules,
# no proxy, no network. Note: Debian's grpc-go (1.33) marshals with protobuf
# API v1 by default; servers need a codec on google.golang.org/protobuf.
#
# Usage: go-grpc-stubs.sh [--no-install] GOPATH IMPORT
#        (--no-install: fail if a package is missing)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"

install=1
if [ "${1:-}" = "--no-install" ]; then
    install=0
    shift
fi
if [ $# -ne 2 ]; then
    echo "usage: go-grpc-stubs.sh [--no-install] GOPATH IMPORT" >&2
    exit 2
fi
gopath="$1"
import="$2"

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
        echo "go-grpc-stubs: missing Debian packages: ${missing[*]}" >&2
        exit 1
    fi
    "$here/apt-install.sh" "${missing[@]}"
fi

stubs="$gopath/src/$import"
mkdir -p "$stubs"
proto="fn/v1/run_function.proto"
protoc --proto_path="$root/proto/proto" --proto_path=/usr/include \
    --go_out="$stubs" --go_opt=paths=source_relative --go_opt="M$proto=$import" \
    --go-grpc_out="$stubs" --go-grpc_opt=paths=source_relative --go-grpc_opt="M$proto=$import" \
    "$proto"
# source_relative keeps the proto's directories; the package is flat.
mv -f "$stubs"/fn/v1/*.go "$stubs"/
rm -rf "$stubs/fn"
