#!/usr/bin/env bash
# Regenerates the render golden cases and their expected YAML with the
# reference emitter (go-yaml v2, which crossplane render uses). A developer
# step: the tests only read the committed files.
#   apt-get install -y golang-go golang-gopkg-yaml.v2-dev
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ref=${JSON2YAML:-/tmp/json2yaml}
if [ ! -x "$ref" ]; then
  src=$(cd "$here/../../../shared/tools/json2yaml" && pwd)
  (cd "$src" && GOPATH=/usr/share/gocode GO111MODULE=off go build -o "$ref" .)
fi
python3 "$here/cases.py"
python3 "$here/operation_cases.py"
python3 "$here/upstream_examples.py"
for expected in "$here"/cases/*/expected.json "$here"/operation-cases/*/expected.json "$here"/upstream-examples/*/*/expected.json; do
  "$ref" < "$expected" > "${expected%.json}.yaml"
done
echo "regenerated $(ls "$here"/cases/*/expected.yaml "$here"/operation-cases/*/expected.yaml "$here"/upstream-examples/*/*/expected.yaml | wc -l) expected outputs"
