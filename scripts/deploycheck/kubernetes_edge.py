"""The edge's Deployment and the NetworkPolicies, evaluated on the pods of the manifests."""

import re

from .kubernetes_objects import EDGE, EDGE_CONFIG, NAMESPACE, container_of, locked_down, pause_seconds, served, sized
from .nginx_routes import nginx_seconds, strip_comments


def check_edge(kube, problems, settings, nginx_conf):
    """nginx.conf as deploy/nginx/nginx.conf has it, the upstreams every proxy_pass names, the
    certificates where nginx.conf reads them (the device CA's key not among them), its listening
    ports public through a LoadBalancer that keeps client addresses, non-root with no capability."""
    problem = problems.under(EDGE)
    if kube.edge_files.get("nginx.conf") != nginx_conf:
        problem(f"the nginx.conf of ConfigMap {EDGE_CONFIG} (edge.yaml) differs from deploy/nginx/nginx.conf: "
                "run python3 deploy/kubernetes/sync-edge-config.py")
    conf = strip_comments(nginx_conf)
    for target in sorted(set(re.findall(r"proxy_pass\s+http://([\w-]+)", conf)) - set(kube.upstreams)):
        problem(f"nginx.conf proxies to {target}, which the upstreams.conf of {EDGE_CONFIG} does not define")
    services_read_timeout = min([int(settings[n].get("LAYER_READ_TIMEOUT_MS", "30000")) / 1000 for n in settings]
                                or [30])
    for upstream, body in sorted(kube.upstreams.items()):
        if "keepalive" in re.findall(r"^\s*(\w+)", body, re.M):
            timeout = nginx_seconds((re.findall(r"keepalive_timeout\s+(\S+)\s*;", body) or ["60s"])[0])
            if timeout is None or timeout >= services_read_timeout:
                problem(f"upstream {upstream}: keepalive_timeout ({timeout} s) is not below the services' idle "
                        f"timeout (LAYER_READ_TIMEOUT_MS, {services_read_timeout:g} s): nginx could reuse a "
                        "connection being closed")
    spec = kube.edge["spec"]
    pod = spec["template"]
    container = container_of(kube.edge)
    if spec.get("replicas", 1) < 2:
        problem("fewer than 2 replicas")
    if pod["metadata"]["labels"].get("app.kubernetes.io/component") != "edge":
        problem("its pods are not labelled app.kubernetes.io/component: edge "
                "(network-policies.yaml selects them by it)")
    image = container.get("image", "")
    version = re.fullmatch(r"(?:docker\.io/(?:library/)?)?nginx:(\d+)\.(\d+)\.(\d+)(-alpine)?", image)
    if not version or tuple(map(int, version.groups()[:3])) < (1, 22, 0):
        problem(f"image {image!r} is not the official nginx at a fixed version, 1.22 or later")
    mounts = {m["mountPath"].rstrip("/"): m for m in container.get("volumeMounts", [])}
    volumes = {v["name"]: v for v in pod["spec"].get("volumes", [])}
    command = container.get("command") or []
    config_file = command[command.index("-c") + 1] if "-c" in command[:-1] else "/etc/nginx/nginx.conf"
    if kube.provided(pod["spec"], container, config_file) != ("configMap", EDGE_CONFIG, "nginx.conf"):
        problem(f"nginx reads {config_file}, which is not the nginx.conf of ConfigMap {EDGE_CONFIG}")
    # Its includes from the mounted configuration (the upstreams among them); others are the image's.
    for include in re.findall(r"include\s+(\S+)\s*;", conf):
        directory, _, file = include.rpartition("/")
        if (directory in mounts or include.endswith("/upstreams.conf")) \
                and kube.provided(pod["spec"], container, include) != ("configMap", EDGE_CONFIG, file):
            problem(f"nginx.conf includes {include}, which is not mounted from ConfigMap {EDGE_CONFIG}")
    certificates = r"(ssl_certificate|ssl_certificate_key|ssl_client_certificate)\s+(\S+)\s*;"
    for directive, path in re.findall(certificates, conf):
        if kube.provided(pod["spec"], container, path) is None:
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
        if not any(volumes.get(mount["name"], {}).get("emptyDir") is not None and not mount.get("readOnly")
                   and (writable + "/").startswith(path + "/") for path, mount in mounts.items()):
            problem(f"{writable} is not on a writable emptyDir (the root filesystem is read-only)")
    if not locked_down(pod["spec"], container):
        problem("the container is not locked down (non-root, read-only root, no privilege escalation, no capabilities)")
    listening = sorted({int(port) for port in re.findall(r"listen\s+(?:[\[\]\w.:]*:)?(\d+)\b", conf)})
    sysctls = {s["name"]: s["value"] for s in pod["spec"].get("securityContext", {}).get("sysctls", [])}
    unprivileged = int(sysctls.get("net.ipv4.ip_unprivileged_port_start", 1024))
    if listening and min(listening) < unprivileged:
        problem(f"nginx.conf listens on {listening}, but a non-root nginx may bind only from {unprivileged} "
                "(set the sysctl net.ipv4.ip_unprivileged_port_start)")
    balancers = kube.load_balancers(spec["selector"]["matchLabels"])
    for port in listening:
        if not served(balancers, container.get("ports", []), port, "TCP"):
            problem(f"port {port} of nginx.conf is not carried by a LoadBalancer Service with externalTrafficPolicy "
                    "Local (with Cluster the services would see a node's address, not the client's)")
    for probe in ("readinessProbe", "livenessProbe"):
        if probe not in container:
            problem(f"no {probe}")
    if not sized(container):
        problem("no cpu and memory requests and limits")
    pause, grace = pause_seconds(container), pod["spec"].get("terminationGracePeriodSeconds", 30)
    if pause < 3 or grace <= pause:
        problem(f"no preStop pause of 3 s or more within terminationGracePeriodSeconds (pause {pause} s, "
                f"grace {grace} s)")
    if not (pod["spec"].get("affinity") or {}).get("podAntiAffinity"):
        problem("no pod anti-affinity: both replicas may share a node")
    if not kube.budgeted(EDGE, kube.edge):
        problem("no PodDisruptionBudget of the same name that selects its pods")


class Endpoints:
    """The pods of the manifests and the others the policies are asked about."""

    def __init__(self, kube):
        net = kube.network
        self.outsider = net.endpoint(None, {}, "203.0.113.7")
        self.stray = net.endpoint(NAMESPACE, {"app.kubernetes.io/name": "debug"}, "10.244.9.9", [("http", 8080, "TCP")])
        self.neighbour = net.endpoint("default", {"app.kubernetes.io/name": "something"}, "10.244.9.10")
        self.prometheus = net.endpoint("monitoring", {"app.kubernetes.io/name": "prometheus"}, "10.244.9.11")
        self.prometheus["namespace_labels"]["layerline.example.com/monitoring"] = "true"
        self.grafana = net.endpoint("monitoring", {"app.kubernetes.io/name": "grafana"}, "10.244.9.14")
        self.grafana["namespace_labels"]["layerline.example.com/monitoring"] = "true"
        self.dns = net.endpoint("kube-system", {"k8s-app": "kube-dns"}, "10.244.9.12",
                                [("dns", 53, "UDP"), ("dns-tcp", 53, "TCP")])
        self.managed_database = net.endpoint(None, {}, "198.51.100.5", [("postgresql", 5432, "TCP")])
        self.cnpg_database = net.endpoint("layerline-db", {"cnpg.io/cluster": "layerline-db"}, "10.244.9.13",
                                          [("postgresql", 5432, "TCP")])
        self.pods = {name: net.pod(d, i) for i, (name, d) in enumerate(sorted(kube.service_deployments.items()))}
        self.edge = net.pod(kube.edge, 100) if kube.edge else None


def check_network_policies(kube, problems, at):
    """Who reaches whom: the edge, the other services and Prometheus reach a service, nothing else
    does; anyone reaches the edge; every pod reaches DNS, the services PostgreSQL."""
    reaches = kube.network.reaches
    if not kube.network.default_deny(NAMESPACE):
        problems.append(f"no default-deny NetworkPolicy for ingress in namespace {NAMESPACE}")
    if reaches(at.outsider, at.stray, "http") or reaches(at.neighbour, at.stray, "http"):
        problems.append(f"NetworkPolicy: a pod of namespace {NAMESPACE} that no policy names is reachable "
                        "(no default deny)")
    for name, pod in sorted(at.pods.items()):
        problem = problems.under(f"{name}: NetworkPolicy")
        for who, source, expected in [("the edge", at.edge, True), ("anyone outside", at.outsider, False),
                                      ("a pod of no role in its namespace", at.stray, False),
                                      ("a pod of another namespace", at.neighbour, False),
                                      ("Prometheus in a labelled namespace", at.prometheus, True),
                                      ("another pod of that namespace", at.grafana, False)] + \
                [(other, at.pods[other], True) for other in sorted(at.pods) if other != name]:
            if source is not None and reaches(source, pod, "http") != expected:
                problem(f"{who} {'cannot reach' if expected else 'reaches'} its http port")
        for protocol in ("UDP", "TCP"):
            if not reaches(pod, at.dns, "dns" if protocol == "UDP" else "dns-tcp", 53, protocol):
                problem(f"it cannot reach DNS in kube-system over {protocol}")
        for what, database in (("a managed PostgreSQL", at.managed_database),
                               ("CloudNativePG in its own namespace", at.cnpg_database)):
            if not reaches(pod, database, "postgresql"):
                problem(f"it cannot reach {what} on 5432")
    if at.edge:
        for name, number, protocol in at.edge["ports"]:
            if not reaches(at.outsider, at.edge, name, number, protocol):
                problems.append(f"{EDGE}: NetworkPolicy: its port {number}/{protocol} is not open to anyone outside")
        if not reaches(at.edge, at.dns, "dns", 53, "UDP"):
            problems.append(f"{EDGE}: NetworkPolicy: it cannot reach DNS in kube-system "
                            "(it resolves the upstreams at start)")
        if reaches(at.edge, at.managed_database, "postgresql"):
            problems.append(f"{EDGE}: NetworkPolicy: it reaches PostgreSQL, which it has no business with")
