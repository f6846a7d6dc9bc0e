"""coturn's Deployment (its arguments as checked for compose, and the same as compose's but for
--external-ip) and voip's STUN port and the URIs it hands out."""

import re

import yaml

from . import coturn as coturn_args
from .common import read
from .kubernetes_objects import container_of, locked_down, served, sized


def compose_coturn_command():
    return (yaml.safe_load(read("docker-compose.yml"))["services"].get("coturn") or {}).get("command") or []


def coturn_arguments(container):
    """coturn's arguments as it sees them: Kubernetes turns `$$` into `$` and `$(NAME)` into a
    variable it defines; then the image's entrypoint expands each argument in bash. A secret
    stands for itself: <secret/key>."""
    def stand_in(variable):
        reference = variable.get("valueFrom", {}).get("secretKeyRef", {"name": "?", "key": "?"})
        return variable.get("value") or f"<{reference['name']}/{reference['key']}>"
    variables = {v["name"]: stand_in(v) for v in container.get("env", [])}

    def replace(match):
        return "$" if match.group(0) == "$$" else variables.get(match.group(1), match.group(0))

    def kubernetes_expand(argument):
        return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)", replace, argument)
    raw = [kubernetes_expand(a) for a in (container.get("command") or []) + (container.get("args") or [])]
    return coturn_args.options(coturn_args.entrypoint_expand(raw, variables))


def check_coturn(kube, problems, deployment, voip_secrets, compose_command, readme):
    """coturn's Deployment; its listening port."""
    pod_spec = deployment["spec"]["template"]["spec"]
    [container] = pod_spec["containers"]
    parsed = coturn_arguments(container)
    problem = problems.under("coturn")
    problems.extend(f"coturn: {text}" for text in coturn_args.problems(parsed))
    if not coturn_args.pinned(container.get("image", "")):
        problem(f"image {container.get('image')!r} is not coturn/coturn at a fixed version")
    # Its settings file (-c) holds the secret: a key of its own Secret, mounted there. README.md
    # makes that key `static-auth-secret=$TURN_SECRET`, and voip's key LAYER_TURN_SECRET the same.
    settings_file = (parsed.get("c") or [""])[0] or ""
    source = kube.provided(pod_spec, container, settings_file)
    if source is None or source[:2] != ("secret", "layerline-turn-secret"):
        problem(f"its settings file {settings_file!r} (-c) is not mounted from the Secret layerline-turn-secret")
    else:
        voip_key = voip_secrets.get("LAYER_TURN_SECRET")
        if f'--from-literal={source[2]}="static-auth-secret=$TURN_SECRET"' not in readme \
                or f'--from-literal={voip_key}="$TURN_SECRET"' not in readme:
            problem(f"README.md does not make its key {source[2]} static-auth-secret=$TURN_SECRET and voip's "
                    f"{voip_key} $TURN_SECRET")
    if container.get("env") or container.get("envFrom"):
        problem("it takes settings from its environment; its secret belongs in its settings file")

    # The same arguments as compose's coturn, but for the address it announces.
    def comparable(arguments):
        return sorted(a.replace("$$", "$") for a in arguments if not a.startswith("--external-ip"))
    own_command = (container.get("command") or []) + (container.get("args") or [])
    if comparable(compose_command) != comparable(own_command):
        differ = set(comparable(compose_command)) ^ set(comparable(own_command))
        problem(f"its arguments differ from compose's coturn (besides --external-ip): {sorted(differ)}")
    namespace = deployment["metadata"].get("namespace")
    level = ((kube.namespaces.get(namespace) or {}).get("metadata", {}).get("labels") or {}) \
        .get("pod-security.kubernetes.io/enforce", "privileged")
    container_ports = container.get("ports", [])
    listening_port = (parsed.get("listening-port") or ["3478"])[0]
    try:
        listening = int(listening_port)
        if pod_spec.get("hostNetwork"):
            if level != "privileged":
                problem(f"it uses the host network, which the Pod Security level {level!r} of namespace "
                        f"{namespace} refuses")
            for protocol in ("UDP", "TCP"):
                if not any(p["containerPort"] == listening and p.get("hostPort") == listening
                           and p.get("protocol", "TCP") == protocol for p in container_ports):
                    problem(f"its listening port {listening}/{protocol} is not declared as a hostPort (two pods could "
                            "share a node)")
        else:
            balancers = kube.load_balancers(deployment["spec"]["selector"]["matchLabels"])
            missing = [f"{port}/{protocol}" for port, protocol in [(listening, "UDP"), (listening, "TCP")]
                       + [(p, "UDP") for p in coturn_args.relay_ports(parsed)]
                       if not served(balancers, container_ports, port, protocol)]
            if missing:
                problem(f"neither the host network nor a LoadBalancer Service with externalTrafficPolicy Local carries "
                        f"{missing[:3]}…")
    except (KeyError, TypeError, ValueError):
        pass  # reported by coturn_args.problems
    if not locked_down(pod_spec, container, {"NET_BIND_SERVICE"}):
        problem("the container is not locked down (non-root, read-only root, no privilege escalation, "
                "no capability but NET_BIND_SERVICE)")
    if not sized(container):
        problem("no cpu and memory requests and limits")
    if "readinessProbe" not in container or "livenessProbe" not in container:
        problem("no readiness and liveness probes")
    if not kube.budgeted("coturn", deployment):
        problem("no PodDisruptionBudget of the same name that selects its pods")
    return listening_port


def check_voip(kube, problems, voip, environment, secrets, at, coturn_listening):
    """voip's STUN port, public through a LoadBalancer that keeps client addresses, and the URIs it hands out."""
    problem = problems.under("layer-voip")
    if secrets.get("LAYER_TURN_SECRET") is None:
        problem("LAYER_TURN_SECRET does not come from the Secret layerline-secrets")
    if environment.get("LAYER_STUN_HOST") not in ("0.0.0.0", "::"):
        problem(f"LAYER_STUN_HOST {environment.get('LAYER_STUN_HOST')!r} does not listen on every address")
    container = container_of(voip)
    stun_port = int(environment.get("LAYER_STUN_PORT", 3478))
    stun_names = [p.get("name") for p in container.get("ports", [])
                  if p["containerPort"] == stun_port and p.get("protocol") == "UDP"]
    if not stun_names:
        problem(f"its container does not declare its STUN port {stun_port}/UDP")
    elif not kube.network.reaches(at.outsider, at.pods["layer-voip"], stun_names[0], stun_port, "UDP"):
        problem(f"NetworkPolicy: its STUN port {stun_port}/UDP is not open to anyone outside")
    balancers = kube.load_balancers(voip["spec"]["selector"]["matchLabels"])
    targets = {stun_port} | set(stun_names)
    stun_services = [p["port"] for s in balancers for p in s["spec"]["ports"]
                     if p.get("protocol") == "UDP" and p.get("targetPort", p["port"]) in targets]
    if not stun_services:
        problem(f"no LoadBalancer Service with externalTrafficPolicy Local carries its STUN port {stun_port}/UDP "
                "(with Cluster, clients would be told a node's address)")
    uris = [u.strip() for u in environment.get("LAYER_TURN_URIS", "").split(",") if u.strip()]
    if not any(re.fullmatch(r"stun:[^:?]+:(\d+)", u) and int(u.rsplit(":", 1)[1]) in stun_services for u in uris):
        problem(f"LAYER_TURN_URIS {uris} names no stun:<host>:<port> of its STUN Service {stun_services}")
    for transport in ("udp", "tcp"):
        if not any(re.fullmatch(rf"turn:[^:?]+:{coturn_listening}\?transport={transport}", u) for u in uris):
            problem(f"LAYER_TURN_URIS {uris} names no turn:<host>:{coturn_listening}?transport={transport} (coturn)")
