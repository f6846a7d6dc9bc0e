#!/usr/bin/env bash
# Creates the certificates a development deployment needs, in deploy/certs/ (gitignored):
#
#   device-ca.key   the device CA's P-256 private key (PKCS#8 PEM); the auth service signs with it
#   device-ca.pem   the device CA's self-signed certificate (20 years); the edge verifies with it
#   server.key      the edge's TLS key (P-256, PKCS#8 PEM)
#   server.pem      the edge's self-signed TLS certificate for localhost / 127.0.0.1
#
# Existing files are kept; --force replaces them. --out DIR writes somewhere else.
#
# Usage: bash deploy/make-dev-certs.sh [--force] [--out DIR]
set -euo pipefail

script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out_dir="$script_dir/certs"
force=0

while [[ $# -gt 0 ]]; do
    case "$1" in
        --force) force=1; shift ;;
        --out)
            [[ $# -ge 2 ]] || { echo "--out needs a directory" >&2; exit 2; }
            out_dir="$2"; shift 2 ;;
        -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "unknown argument: $1 (try --help)" >&2; exit 2 ;;
    esac
done

command -v openssl >/dev/null || { echo "openssl is required" >&2; exit 1; }

# The uid of the `layer` user in deploy/Dockerfile, which must be able to read the CA key.
container_uid=10001

umask 077
mkdir -p "$out_dir"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Whether a certificate + key pair has to be (re)made. A half-present pair is an error: the
# other half cannot be reconstructed, and silently replacing it would break what uses it.
needs_pair() {
    local cert="$out_dir/$1" key="$out_dir/$2"
    if [[ $force -eq 1 ]]; then return 0; fi
    if [[ -e $cert && -e $key ]]; then
        echo "keeping $cert and $key (use --force to replace)"
        return 1
    fi
    if [[ -e $cert || -e $key ]]; then
        echo "only one of $cert and $key exists; remove it or use --force" >&2
        exit 1
    fi
    return 0
}

new_p256_key() {
    # genpkey writes PKCS#8 ("BEGIN PRIVATE KEY") with the named curve.
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 \
        -pkeyopt ec_param_enc:named_curve -out "$1" 2>/dev/null
}

# An explicit configuration, so the result does not depend on the system's openssl.cnf.
cat >"$work/openssl.cnf" <<'CNF'
[ req ]
distinguished_name = dn
prompt = no

[ dn ]

[ device_ca ]
basicConstraints = critical, CA:TRUE, pathlen:0
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash

[ server ]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, IP:127.0.0.1
subjectKeyIdentifier = hash
CNF

if needs_pair device-ca.pem device-ca.key; then
    new_p256_key "$work/device-ca.key"
    openssl req -new -x509 -config "$work/openssl.cnf" -extensions device_ca \
        -key "$work/device-ca.key" -sha256 -days 7305 \
        -subj "/O=Layerline/CN=Layerline Device CA" -out "$work/device-ca.pem"
    # The auth container runs as uid $container_uid and compose bind-mounts file secrets with their
    # host owner and mode. As root, hand the key to that uid; otherwise the only way for it to
    # read the key is to make it world-readable, acceptable for a development CA only.
    if [[ $(id -u) -eq 0 ]]; then
        chown "$container_uid:$container_uid" "$work/device-ca.key"
        chmod 0400 "$work/device-ca.key"
    else
        chmod 0644 "$work/device-ca.key"
        echo "note: device-ca.key is world-readable so that the auth container (uid $container_uid) can read it; development only"
    fi
    chmod 0644 "$work/device-ca.pem"
    mv -f "$work/device-ca.key" "$work/device-ca.pem" "$out_dir/"
    echo "wrote $out_dir/device-ca.pem and $out_dir/device-ca.key"
fi

if needs_pair server.pem server.key; then
    new_p256_key "$work/server.key"
    openssl req -new -x509 -config "$work/openssl.cnf" -extensions server \
        -key "$work/server.key" -sha256 -days 825 \
        -subj "/O=Layerline development/CN=localhost" -out "$work/server.pem"
    # Read by nginx's master process, which runs as root in the edge container.
    chmod 0600 "$work/server.key"
    chmod 0644 "$work/server.pem"
    mv -f "$work/server.key" "$work/server.pem" "$out_dir/"
    echo "wrote $out_dir/server.pem and $out_dir/server.key"
fi
