#!/usr/bin/env bash
# Builds the Go oracle of function-go-templating's differential test
# (oracle/main.go): text/template and sprig from Debian's packages only.
#
# Installs golang-go, golang-github-masterminds-sprig-dev,
# golang-gopkg-yaml.v3-dev and golang-k8s-sigs-yaml-dev if missing (as root, or with sudo, through
# tests/apt-install.sh) and builds in GOPATH mode with no module proxy.
# Idempotent; prints the binary's path on stdout:
# $CARGO_TARGET_DIR/gotmpl-oracle/xfn-gotmpl-oracle (target/ by default).
#
# Usage: build.sh [--no-install]   (--no-install: fail if a package is missing)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
out="$target/gotmpl-oracle"

install=1
if [ "${1:-}" = "--no-install" ]; then
    install=0
fi

declare -A wanted=(
    [golang-go]=/usr/bin/go
    [golang-github-masterminds-sprig-dev]=/usr/share/gocode/src/github.com/Masterminds/sprig/functions.go
    [golang-gopkg-yaml.v3-dev]=/usr/share/gocode/src/gopkg.in/yaml.v3/yaml.go
    [golang-k8s-sigs-yaml-dev]=/usr/share/gocode/src/sigs.k8s.io/yaml/yaml.go
)
missing=()
for package in "${!wanted[@]}"; do
    [ -e "${wanted[$package]}" ] || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$install" -eq 0 ]; then
        echo "gotmpl oracle: missing Debian packages: ${missing[*]}" >&2
        exit 1
    fi
    "$root/tests/apt-install.sh" "${missing[@]}"
fi

mkdir -p "$out/gopath" "$out/cache"
env GOPATH="$out/gopath:/usr/share/gocode" GO111MODULE=off GOPROXY=off GOFLAGS= \
    GOCACHE="$out/cache" CGO_ENABLED=0 \
    go build -o "$out/xfn-gotmpl-oracle" "$here/main.go"
echo "$out/xfn-gotmpl-oracle"
