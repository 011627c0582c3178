#!/bin/sh
# Rebuilds expected.yaml from cases.jsonl with the reference emitter
# (/work/shared/tools/json2yaml: go-yaml v2.4, as sigs.k8s.io/yaml.JSONToYAML).
#
# A developer step, never run by the tests. Needs Go and go-yaml v2, e.g. on
# Debian: apt-get install golang-go golang-gopkg-yaml.v2-dev
#
# Usage: tests/golden/regenerate.sh [path/to/json2yaml-source-dir]
# To change the cases, edit gen_cases.py and run it first:
#   python3 gen_cases.py > cases.jsonl
set -eu

here=$(cd "$(dirname "$0")" && pwd)
src=${1:-/work/shared/tools/json2yaml}
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT

cp "$src/main.go" "$build/"
(cd "$build" && GOPATH=${GOPATH:-/usr/share/gocode} GO111MODULE=off go build -o json2yaml .)
"$build/json2yaml" < "$here/cases.jsonl" > "$here/expected.yaml"
# go-yaml's key order depends on Go's random map order when its comparison is
# not transitive for a key set; make sure no case is like that.
for run in 1 2 3 4 5; do
  "$build/json2yaml" < "$here/cases.jsonl" | cmp -s - "$here/expected.yaml" || {
    echo "the reference output is not deterministic; see consistent_keys in gen_cases.py" >&2
    exit 1
  }
done
echo "wrote $here/expected.yaml ($(grep -c '^---$' "$here/expected.yaml") documents)"
