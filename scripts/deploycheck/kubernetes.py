"""The wiring of the Kubernetes manifests, deploy/kubernetes/*.yaml.

Every service executable of Package.swift (`layer-<name>`; not the operator's `layer` nor
`layer-bench`) runs as a Deployment of the namespace layerline with that command, all of them from
one image, with a Service, and an upstream in the edge's upstreams.conf pointing at that Service:
none can be left out when a service is added. Each of those Deployments: two replicas or more,
startup and liveness probes on /health/live and readiness on /health/ready?peers=false (the
replica's own database: a peer's outage must not empty every Service), requests and limits, a
locked-down container, its port as in its ConfigMap, the secrets it needs (the operator token only
for auth, where `layer admin` runs; its own internal token and its callers', no other; the key of
content links only for sync), a Service and a disruption budget that select its pods, a preStop
pause within its grace period with the shutdown timeout, trusted proxies given as addresses or
CIDR ranges, and the certificate header nginx.conf forwards. Their PostgreSQL pools, (replicas +
maxSurge) x LAYER_DATABASE_MAX_CONNECTIONS, fit the budget below. The sync, names and voip
services reach the auth service through the auth Service's name and port, auth the sync service
through the sync Service's, sync the names service through the names Service's, and voip all three.

The edge: its nginx.conf identical to deploy/nginx/nginx.conf (sync-edge-config.py), every upstream
it proxies to defined, idle upstream connections closed before the services close them, the
certificates where nginx.conf reads them (the device CA's key not among them), the official nginx
at a fixed version, non-root without capabilities (a sysctl lets it bind 80 and 443), behind a
LoadBalancer that keeps client addresses. The NetworkPolicies, evaluated: nothing unless allowed;
the edge, the other services and Prometheus reach a service, nothing else does; anyone reaches
the edge and voip's STUN port; every pod reaches DNS, the services PostgreSQL.

voip's STUN port is served by a LoadBalancer Service that keeps client addresses
(externalTrafficPolicy: Local), on the port its URIs name; it signs TURN credentials with the key
LAYER_TURN_SECRET of layerline-secrets. coturn: pinned, its arguments (as Kubernetes and then its
image's entrypoint expand them) as checked for compose and the same as compose's but for
--external-ip, its secret in a settings file mounted from its own Secret (made from the same value
as voip's in README.md), nothing in its environment, reachable on its ports (host network, or a
LoadBalancer keeping addresses), in a namespace whose Pod Security level admits it, locked down
otherwise, with a disruption budget. Every checkov skip annotation gives its reason."""

import re

from . import kubernetes_edge as edge
from . import kubernetes_services as services
from . import kubernetes_turn as turn
from .common import Problems, read, report
from .kubernetes_objects import EDGE, NAMESPACE, Manifests, container_of, load, loopback_upstreams


def _objects(kube, problems):
    """Every object in a namespace defined here; each checkov skip with its reason."""
    for o in kube.objects:
        namespace = o["metadata"].get("namespace")
        if o.get("kind") != "Namespace" and namespace not in kube.namespaces:
            problems.append(f"{o['kind']} {o['metadata']['name']}: its namespace {namespace!r} is not defined here")
        # checkov's skips: each names one check and says why (checkov splits the value at "=").
        template = ((o.get("spec") or {}).get("template") or {}).get("metadata", {})
        for key, value in ((o["metadata"].get("annotations") or {}) | (template.get("annotations") or {})).items():
            if key.startswith("checkov.io/skip") and not re.fullmatch(r"CKV2?_K8S_\d+=[^=]{20,}", str(value)):
                problems.append(f"{o['kind']} {o['metadata']['name']}: {key} is not CKV_K8S_<n>=<a reason of 20 "
                                "characters or more, without '='>")


def problems(objects, products, nginx_conf, compose_coturn_command, readme):
    """What is wrong with the manifests' objects, given the executable products, nginx.conf (its
    text), compose's coturn command and deploy/kubernetes/README.md (its text); and a summary."""
    kube = Manifests(objects)
    found = Problems()
    # The service executables: layer-<name>, but not the operator's `layer` nor the benchmark.
    service_products = sorted(p for p in products if p.startswith("layer-") and p != "layer-bench")
    if not service_products:
        found.append("Package.swift has no service executables (layer-<name>)")
    _objects(kube, found)
    if kube.edge is None or kube.edge["metadata"].get("namespace") != NAMESPACE:
        found.append(f"no Deployment {EDGE} (the edge) in namespace {NAMESPACE}")
    settings, secret_env = {}, {}
    for name, deployment in sorted(kube.service_deployments.items()):
        settings[name], secret_env[name] = services.check_service(kube, found, name, deployment, service_products,
                                                                  nginx_conf)
    images = {name: container_of(d).get("image") for name, d in kube.service_deployments.items()}
    if len(set(images.values())) != 1:
        found.append(f"the services do not share one image: {images}")
    services.check_deployed_and_routed(kube, found, service_products)
    terms, connections = services.check_connections(kube, found, settings)
    services.check_calls(kube, found, settings)
    if kube.edge:
        edge.check_edge(kube, found, settings, nginx_conf)
    at = edge.Endpoints(kube)
    edge.check_network_policies(kube, found, at)
    coturn_listening = "3478"
    if "coturn" in kube.deployments:
        coturn_listening = turn.check_coturn(kube, found, kube.deployments["coturn"], secret_env.get("layer-voip", {}),
                                             compose_coturn_command, readme)
    else:
        found.append("no Deployment coturn")
    if "layer-voip" in kube.service_deployments:
        turn.check_voip(kube, found, kube.service_deployments["layer-voip"], settings.get("layer-voip", {}),
                        secret_env.get("layer-voip", {}), at, coturn_listening)
    return found, (f"services: {sorted(kube.service_deployments)} (one image, their upstreams in the edge); "
                   f"PostgreSQL connections: {' + '.join(terms)} = {connections} of {services.BUDGET}; "
                   f"NetworkPolicies: {len(kube.network.policies)}")


def main(argv):
    """argv: the executable products, separated by spaces."""
    return report(*problems(load(), set(argv[0].split()), read("deploy/nginx/nginx.conf"),
                            turn.compose_coturn_command(), read("deploy/kubernetes/README.md")))


def loopback_upstreams_main(argv):
    """Writes the Kubernetes edge's upstreams.conf to argv[0], for `nginx -t`."""
    with open(argv[0], "w") as out:
        out.write(loopback_upstreams(load()))
    return 0
