#!/usr/bin/env bash
# Installs what the suite and its tests need when it is missing: from Debian's packages, the
# PostgreSQL server binaries (initdb, pg_ctl, postgres) for the embedded default, python3-venv for
# the offline deployment checks, nginx for the edge tests, Chromium for the browser tests, and coturn, whose STUN client (turnutils_stunclient) and server
# (turnserver) the STUN interoperability tests and `layer-bench stun` run; with pip, into the
# project's virtual environment .venv-tools/ (gitignored), aioice, the independent STUN client of
# those tests. Safe to run again; does nothing when all is there.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

missing=()
bindir="$(pg_config --bindir 2>/dev/null || true)"
if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ] || [ ! -x "$bindir/pg_ctl" ]; then
    if ! ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1; then
        missing+=(postgresql postgresql-contrib)
    fi
fi
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || missing+=(python3-venv)
command -v runuser >/dev/null 2>&1 || missing+=(util-linux)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
command -v turnutils_stunclient >/dev/null 2>&1 || missing+=(coturn)
# The edge tests and `nginx -t` run the project's nginx configuration with Debian's nginx.
[ -x /usr/sbin/nginx ] || command -v nginx >/dev/null 2>&1 || missing+=(nginx)
# The browser tests load a web app's page in headless Chromium, which calls the suite on another origin.
[ -x /usr/bin/chromium ] || missing+=(chromium)

if [ ${#missing[@]} -gt 0 ]; then
    echo "Installing: ${missing[*]}"
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    # Debian starts the servers it installs (nginx on port 80, coturn on 3478); the tests start
    # their own, so a policy-rc.d that says "not now" keeps the packages' services stopped.
    policy=/usr/sbin/policy-rc.d
    made_policy=""
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
        $sudo chmod 755 "$policy"
        made_policy=yes
    fi
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
    if [ -n "$made_policy" ]; then $sudo rm -f "$policy"; fi
    # Only coturn's programs are wanted, not the system service Debian starts with them: a TURN
    # server on port 3478, where `layer dev` serves STUN.
    if [[ " ${missing[*]} " == *" coturn "* ]] && [ -d /run/systemd/system ]; then
        $sudo systemctl disable --now coturn >/dev/null 2>&1 || true
    fi
fi

# shellcheck source=scripts/check-lib.sh
source scripts/check-lib.sh
install_tools aioice==0.13.0
