#!/usr/bin/env bash
# Writes .env for docker compose from .env.example, with a new random value for each secret
# (POSTGRES_PASSWORD, each service's LAYER_INTERNAL_TOKEN_<SERVICE>, LAYER_CONTENT_LINK_SECRET,
# LAYER_OPERATOR_TOKEN, LAYER_TURN_SECRET). The file is created with mode 0600. An existing .env is kept as it is; only secrets it leaves empty are filled.
#
#   bash deploy/make-env.sh [--out PATH]      (default: .env next to docker-compose.yml)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$root/.env"
if [[ ${1:-} == --out ]]; then out="$2"; fi

secrets=(POSTGRES_PASSWORD LAYER_INTERNAL_TOKEN_AUTH LAYER_INTERNAL_TOKEN_SYNC LAYER_INTERNAL_TOKEN_NAMES
    LAYER_INTERNAL_TOKEN_VOIP LAYER_CONTENT_LINK_SECRET LAYER_OPERATOR_TOKEN LAYER_TURN_SECRET)

umask 077
if [[ -e $out ]]; then
    echo "keeping $out; filling only the secrets it leaves empty"
else
    cp "$root/.env.example" "$out"
fi
chmod 600 "$out"

for name in "${secrets[@]}"; do
    # Hex: URL-safe (the password goes into postgres:// URLs) and safe in any shell or YAML.
    value="$(openssl rand -hex 32)"
    if grep -q "^$name=..*" "$out"; then
        continue
    elif grep -q "^$name=" "$out"; then
        sed -i "s|^$name=.*|$name=$value|" "$out"
    else
        printf '%s=%s\n' "$name" "$value" >>"$out"
    fi
    echo "$name: generated"
done
echo "wrote $out"
