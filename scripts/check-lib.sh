# Sourced by the check scripts (check-deploy.sh, check-openapi.sh), from the repository root:
# their pass/fail reporting, a temporary directory, and the pinned Python tools they run, which
# live in one virtual environment, .venv-tools/ (gitignored), made on first use.
# shellcheck shell=bash

venv=.venv-tools
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

# The sourcing script names its checks in checks_name.
summary_and_exit() {
    echo "${checks_name:-checks}: $passed passed, $failed failed"
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

# install_tools NAME==VERSION…: creates the venv when missing and installs with pip each tool that
# is not there at exactly that version.
install_tools() {
    if [[ ! -x $venv/bin/python ]]; then
        python3 -m venv "$venv"
    fi
    local spec missing=()
    for spec in "$@"; do
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
