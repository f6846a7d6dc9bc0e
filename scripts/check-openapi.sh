#!/usr/bin/env bash
# Validates the OpenAPI documents with a standard validator, openapi-spec-validator, against
# OpenAPI 3.1: each service's document and the suite's (what `layer dev` serves), as the built
# `layer openapi --out` writes them, and the shared part, openapi-common.yaml, on its own. The
# validator proves first that it refuses a broken document, so a validator that passes
# everything cannot pass these.
#
# Needs `swift build` first (scripts/test runs it after the build). The validator is pinned and
# installed with pip into .venv-tools/ (gitignored) when missing.
# Run from the repository root: bash scripts/check-openapi.sh
# shellcheck disable=SC2329  # functions given to check/check_fails by name look unused to it
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

# shellcheck source=scripts/check-lib.sh
source scripts/check-lib.sh
checks_name=openapi-checks
requirements=(openapi-spec-validator==0.9.0)
layer=.build/debug/layer

if install_tools "${requirements[@]}" >"$log" 2>&1; then
    pass "tools: ${requirements[*]}"
else
    fail "tools: pip could not install ${requirements[*]}"
    summary_and_exit
fi

validate() {
    "$venv/bin/openapi-spec-validator" --schema 3.1 "$1"
}

# A document that refers to a component nobody defined, and one that gives an operationId twice.
cat >"$work/unresolved.yaml" <<'YAML'
openapi: 3.1.0
info: {title: broken, version: '1'}
paths:
  /a:
    get:
      responses:
        '200': {$ref: '#/components/responses/Nowhere'}
YAML
cat >"$work/repeated.yaml" <<'YAML'
openapi: 3.1.0
info: {title: broken, version: '1'}
paths:
  /a: {get: {operationId: twice, responses: {'200': {description: Done.}}}}
  /b: {get: {operationId: twice, responses: {'200': {description: Done.}}}}
YAML
check_fails "the validator refuses a reference to nothing (self-test)" "Nowhere" validate "$work/unresolved.yaml"
check_fails "the validator refuses a repeated operationId (self-test)" "not unique" validate "$work/repeated.yaml"

documents="$work/documents"
if [[ ! -x $layer ]]; then
    echo "no $layer: run swift build first" >"$log"
    fail "layer openapi --out"
elif check "layer openapi --out (auth, sync, names, voip and the suite)" "$layer" openapi --out "$documents"; then
    for document in "$documents"/*.yaml; do
        check "openapi-spec-validator $(basename "$document")" validate "$document"
    done
fi
check "openapi-spec-validator Shared/Server/openapi-common.yaml" validate Shared/Server/openapi-common.yaml

summary_and_exit
