"""The Kubernetes manifests, deploy/kubernetes/*.yaml, as the checks of kubernetes.py read them:
the objects by kind and name, and what several checks ask of a container."""

import re

from .common import ROOT, yaml_documents
from .network_policies import Network
from .nginx_routes import upstreams

NAMESPACE, EDGE, EDGE_CONFIG = "layerline", "layerline-edge", "layerline-edge"


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


def served(balancers, container_ports, port, protocol):
    """Whether one of the Services carries `port` to that container port (by name or number)."""
    names = {p.get("name") for p in container_ports
             if p["containerPort"] == port and p.get("protocol", "TCP") == protocol}
    return any(p["port"] == port and p.get("protocol", "TCP") == protocol
               and (p.get("targetPort", port) == port or p.get("targetPort") in names)
               for s in balancers for p in s["spec"]["ports"])


def locked_down(pod_spec, container, capabilities=()):
    """Non-root, a read-only root, no privilege escalation, every capability dropped and none
    added but these."""
    context = container.get("securityContext", {})
    return pod_spec.get("securityContext", {}).get("runAsNonRoot") is True \
        and context.get("readOnlyRootFilesystem") is True and context.get("allowPrivilegeEscalation") is False \
        and context.get("capabilities", {}).get("drop") == ["ALL"] \
        and set(context.get("capabilities", {}).get("add") or []) <= set(capabilities)


def sized(container):
    resources = container.get("resources", {})
    return all({"cpu", "memory"} <= set(resources.get(kind, {})) for kind in ("requests", "limits"))


class Manifests:
    """The objects of the manifests, by kind and name."""

    def __init__(self, objects):
        def named(kind):
            return {o["metadata"]["name"]: o for o in objects if o.get("kind") == kind}
        self.objects = objects
        self.deployments, self.configmaps, self.services = named("Deployment"), named("ConfigMap"), named("Service")
        self.budgets, self.namespaces = named("PodDisruptionBudget"), named("Namespace")
        self.network = Network([o for o in objects if o.get("kind") == "NetworkPolicy"], self.namespaces)
        self.service_ports = {name: s["spec"]["ports"][0]["port"] for name, s in self.services.items()}
        self.edge = self.deployments.get(EDGE)
        self.service_deployments = {n: d for n, d in self.deployments.items()
                                    if d["metadata"].get("namespace") == NAMESPACE and n != EDGE}
        self.edge_files = self.configmaps.get(EDGE_CONFIG, {}).get("data") or {}
        self.upstreams = upstreams(self.edge_files.get("upstreams.conf", ""))

    def provided(self, pod_spec, container, path):
        """(kind, name, key) of the ConfigMap or Secret key mounted at `path`, by item path when given."""
        directory, _, file = path.rpartition("/")
        mount = next((m for m in container.get("volumeMounts", []) if m["mountPath"].rstrip("/") == directory), None)
        if mount is None:
            return None
        volume = next((v for v in pod_spec.get("volumes", []) if v["name"] == mount["name"]), {})
        sources = [{k: volume[k]} for k in ("configMap", "secret") if k in volume] + \
            (volume.get("projected") or {}).get("sources", [])
        for source in sources:
            kind, reference = next(iter(source.items()))
            name = reference.get("name") or reference.get("secretName")
            items = reference.get("items")
            if items is None and file in ((self.configmaps.get(name) or {}).get("data") or {} if kind == "configMap"
                                          else {file: None}):
                return (kind, name, file)  # every key of the ConfigMap, or of the Secret (unseen here)
            for item in items or []:
                if item["path"] == file:
                    return (kind, name, item["key"])
        return None

    def load_balancers(self, selector):
        """The LoadBalancer Services that select these pods and keep client addresses."""
        return [s for s in self.services.values() if s["spec"].get("type") == "LoadBalancer"
                and s["spec"].get("selector") == selector and s["spec"].get("externalTrafficPolicy") == "Local"]

    def budgeted(self, name, deployment):
        """Whether a PodDisruptionBudget of the Deployment's name selects its pods."""
        budget = self.budgets.get(name)
        return budget is not None \
            and budget["spec"]["selector"]["matchLabels"] == deployment["spec"]["selector"]["matchLabels"]


def load():
    """The objects of deploy/kubernetes/*.yaml."""
    return yaml_documents(*sorted(str(p.relative_to(ROOT)) for p in (ROOT / "deploy/kubernetes").glob("*.yaml")))


def loopback_upstreams(objects):
    """The edge's upstreams.conf with the Services' names made loopback addresses (for `nginx -t`)."""
    return re.sub(r"server\s+[\w.-]+:(\d+)", r"server 127.0.0.1:\1", Manifests(objects).edge_files["upstreams.conf"])
