"""The services' Deployments: each one's settings, secrets, probes, Service, budget and shutdown;
every service executable deployed and routed; their PostgreSQL pools within the budget; and how
they find one another."""

import ipaddress
import math
import re

from .common import INTERNAL_CALLERS
from .kubernetes_objects import NAMESPACE, container_of, pause_seconds

# Settings whose own names end in _FILE: paths, not LAYER_X given as a file.
PATH_SETTINGS = {"LAYER_CA_CERTIFICATE_FILE", "LAYER_CA_KEY_FILE"}
# PostgreSQL's connection budget: its default max_connections (CloudNativePG keeps it), less
# superuser_reserved_connections, less a margin for operators (psql, `layer migrate`), monitoring
# and backups. deploy/kubernetes/README.md, "Connection budget", has the arithmetic.
POSTGRES_MAX_CONNECTIONS, SUPERUSER_RESERVED, OPERATOR_MARGIN = 100, 3, 12
BUDGET = POSTGRES_MAX_CONNECTIONS - SUPERUSER_RESERVED - OPERATOR_MARGIN
# Who calls whom, through which setting: (caller, variable, Service called).
CALLS = (
    ("layer-sync", "LAYER_AUTH_URL", "layer-auth"),
    ("layer-names", "LAYER_AUTH_URL", "layer-auth"),
    ("layer-auth", "LAYER_SYNC_URL", "layer-sync"),
    ("layer-sync", "LAYER_NAMES_URL", "layer-names"),
    ("layer-voip", "LAYER_AUTH_URL", "layer-auth"),
    ("layer-voip", "LAYER_SYNC_URL", "layer-sync"),
    ("layer-voip", "LAYER_NAMES_URL", "layer-names"),
)


def _environment(kube, problem, pod_spec, container):
    """The container's settings (from ConfigMaps and values) and secrets (setting -> key of
    layerline-secrets, from secretKeyRef, or as files: LAYER_X_FILE naming a file mounted from
    the Secret; "*": every key)."""
    environment, secrets = {}, {}
    for source in container.get("envFrom", []):
        if "configMapRef" in source:
            configmap = kube.configmaps.get(source["configMapRef"]["name"])
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
        setting, source = variable.removesuffix("_FILE"), kube.provided(pod_spec, container, path)
        if source is None:
            problem(f"{variable} names {path}, where no Secret or ConfigMap key is mounted")
        elif source[:2] == ("secret", "layerline-secrets"):
            secrets[setting] = source[2]
        if setting in direct:
            problem(f"{setting} is given both directly and as {variable} (the service refuses that)")
    for variable in PATH_SETTINGS & set(environment):
        if kube.provided(pod_spec, container, environment[variable]) is None:
            problem(f"{variable} names {environment[variable]}, where no Secret or ConfigMap key is mounted")
    return environment, secrets


def check_service(kube, problems, name, deployment, service_products, nginx_conf):
    """One service's Deployment; its settings and secrets (see _environment)."""
    problem = problems.under(name)
    spec = deployment["spec"]
    pod = spec["template"]
    labels = pod["metadata"]["labels"]
    if spec.get("replicas", 1) < 2:
        problem("fewer than 2 replicas")
    if not all(labels.get(k) == v for k, v in spec["selector"]["matchLabels"].items()):
        problem("its selector does not match its pod labels")
    if labels.get("app.kubernetes.io/component") != "service":
        problem("its pods are not labelled app.kubernetes.io/component: service "
                "(network-policies.yaml selects them by it)")
    if pod["spec"].get("securityContext", {}).get("runAsNonRoot") is not True:
        problem("the pod may run as root")
    container = container_of(deployment)
    # One image for every service; the container's command picks the executable.
    command = container.get("command") or []
    if command != [name] or name not in service_products:
        problem(f"its command {command} is not [{name!r}], a service executable of Package.swift ({service_products})")
    context = container.get("securityContext", {})
    if context.get("readOnlyRootFilesystem") is not True or context.get("allowPrivilegeEscalation") is not False \
            or context.get("capabilities", {}).get("drop") != ["ALL"]:
        problem("the container is not locked down (read-only root, no privilege escalation, no capabilities)")
    ports = {p["name"]: p["containerPort"] for p in container.get("ports", [])}
    # Readiness is the replica's own (its database): a peer's outage must not empty every Service.
    for probe, path in (("startupProbe", "/health/live"), ("readinessProbe", "/health/ready?peers=false"),
                        ("livenessProbe", "/health/live")):
        get = container.get(probe, {}).get("httpGet", {})
        if get.get("path") != path or get.get("port") != "http":
            problem(f"{probe} is not GET {path} on the http port")
    resources = container.get("resources", {})
    for kind in ("requests", "limits"):
        if not {"cpu", "memory"} <= set(resources.get(kind, {})):
            problem(f"no cpu and memory {kind}")
    environment, secrets = _environment(kube, problem, pod["spec"], container)
    # Its own internal token and its callers', and no other; the key of content links for sync alone.
    service = name.removeprefix("layer-")
    tokens = {f"LAYER_INTERNAL_TOKEN_{s.upper()}" for s in [service] + INTERNAL_CALLERS.get(service, [])}
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
    service = kube.services.get(name)
    if service is None or service["spec"]["selector"] != spec["selector"]["matchLabels"] \
            or service["spec"]["ports"][0].get("targetPort") != "http" or kube.service_ports[name] != ports.get("http"):
        problem("no Service of the same name that selects its pods and serves the http port")
    if not kube.budgeted(name, deployment):
        problem("no PodDisruptionBudget of the same name that selects its pods")
    # A pause before SIGTERM (endpoints are removed meanwhile), then the shutdown timeout, within
    # the grace period.
    pause = pause_seconds(container)
    shutdown = int(environment.get("LAYER_SHUTDOWN_TIMEOUT_MS", "10000")) / 1000
    grace = pod["spec"].get("terminationGracePeriodSeconds", 30)
    if pause < 3:
        problem(f"no preStop pause of 3 s or more (it has {pause} s): requests would still arrive after SIGTERM")
    if grace <= pause + shutdown:
        problem(f"terminationGracePeriodSeconds {grace} does not exceed the preStop pause {pause} s + "
                f"LAYER_SHUTDOWN_TIMEOUT_MS {shutdown:g} s")
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
        problem(f"LAYER_CLIENT_CERTIFICATE_HEADER {header!r} is not the header nginx.conf forwards the verified "
                "certificate in")
    return environment, secrets


def check_deployed_and_routed(kube, problems, service_products):
    """Every service executable has a Deployment running it, a Service, and an upstream of the edge."""
    for product in service_products:
        running = [n for n, d in kube.service_deployments.items()
                   if (container_of(d).get("command") or [None])[0] == product]
        if len(running) != 1:
            problems.append(f"{product}: {len(running)} Deployments in {NAMESPACE} run it, not one")
            continue
        if product not in kube.services:
            continue  # reported with its Deployment
        upstream = f"layer_{product.removeprefix('layer-').replace('-', '_')}"
        servers = re.findall(r"server\s+([^\s;:]+):(\d+)", kube.upstreams.get(upstream, ""))
        port = kube.service_ports[product]
        if [(host.split(".")[:2], int(number)) for host, number in servers] != [([product, NAMESPACE], port)]:
            problems.append(f"{product}: the edge's upstreams.conf has no upstream {upstream} with the one server "
                            f"{product}.{NAMESPACE}.svc.<cluster domain>:{port} (it has {servers})")


def surge(deployment):
    """The pods a rolling update adds beyond the replicas."""
    strategy = deployment["spec"].get("strategy") or {}
    if strategy.get("type") == "Recreate":
        return 0
    value = str((strategy.get("rollingUpdate") or {}).get("maxSurge", "25%"))
    replicas = deployment["spec"].get("replicas", 1)
    return math.ceil(replicas * int(value[:-1]) / 100) if value.endswith("%") else int(value)


def check_connections(kube, problems, settings):
    """The connection budget: (replicas + maxSurge) processes of each Deployment, each with its
    pool. The terms of the sum, and the sum."""
    connections, terms = 0, []
    for name, deployment in sorted(kube.service_deployments.items()):
        pool = settings.get(name, {}).get("LAYER_DATABASE_MAX_CONNECTIONS")
        if pool is None or not pool.isdigit():
            problems.append(f"{name}: LAYER_DATABASE_MAX_CONNECTIONS is not set (the default, 20 per process, does not "
                            "fit the budget)")
            pool = "20"
        processes = deployment["spec"].get("replicas", 1) + surge(deployment)
        connections += processes * int(pool)
        terms.append(f"{name} {processes}x{pool}")
    if connections > BUDGET:
        problems.append(f"PostgreSQL connections: {' + '.join(terms)} = {connections}, over the budget of {BUDGET} "
                        f"(max_connections {POSTGRES_MAX_CONNECTIONS} - {SUPERUSER_RESERVED} reserved - "
                        f"{OPERATOR_MARGIN} for operators)")
    return terms, connections


def check_calls(kube, problems, settings):
    for caller, variable, callee in CALLS:
        url = settings.get(caller, {}).get(variable, "")
        host, _, port = url.removeprefix("http://").rstrip("/").partition(":")
        if host.split(".")[0] != callee or port != str(kube.service_ports.get(callee)):
            problems.append(f"{caller}: {variable} {url!r} is not the {callee} Service on port "
                            f"{kube.service_ports.get(callee)}")
    region = settings.get("layer-names", {}).get("LAYER_NAMES_DEFAULT_REGION", "")
    if len(region) != 2 or not region.isalpha() or not region.isupper():
        problems.append(f"layer-names: LAYER_NAMES_DEFAULT_REGION {region!r} is not an ISO 3166 alpha-2 code")
