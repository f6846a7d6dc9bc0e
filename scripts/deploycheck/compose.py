"""docker-compose.yml: what compose refuses to run without, .env.example, and the wiring of the
resolved configuration (`compose config --format json`).

Every service built from deploy/Dockerfile runs an executable of Package.swift, listens on the
port its image was built for and is probed there, with the database, its own internal token and
those of the services that call it (and no other), and the edge as its only trusted proxy; sync
alone has the key of content links; the sync, names and voip services also find the auth service,
auth finds sync, sync finds names, and voip finds sync and names. The edge starts after all of
them. voip's STUN port is published as UDP on the same port, and the URIs it hands out name it and
coturn's ports. coturn checks credentials with the secret voip signs them with (read from a
settings file, a config of compose, never from its command line or its environment), publishes
its listening and relay ports, keeps off the services' network and relays to no private, loopback
or link-local address, the compose networks included. No two services publish one host port."""

import json
import os
import re
import subprocess

from . import coturn as coturn_args
from .common import INTERNAL_CALLERS, ROOT, Problems, compose_binary, read, report

# What compose refuses to run without, each with the stand-in value the wiring expects.
REQUIRED = {
    "LAYER_INTERNAL_TOKEN_AUTH": "dummy-layer_internal_token_auth",
    "LAYER_INTERNAL_TOKEN_SYNC": "dummy-layer_internal_token_sync",
    "LAYER_INTERNAL_TOKEN_NAMES": "dummy-layer_internal_token_names",
    "LAYER_INTERNAL_TOKEN_VOIP": "dummy-layer_internal_token_voip",
    "LAYER_CONTENT_LINK_SECRET": "dummy-links",
    "LAYER_OPERATOR_TOKEN": "dummy-operator",
    "LAYER_TURN_SECRET": "dummy-turn-secret",
    "POSTGRES_PASSWORD": "dummy",
}


def config(compose, variables, *arguments, text=None):
    """`compose config` on docker-compose.yml (or on `text`) with these variables. The operator's
    secrets, COMPOSE_FILE, COMPOSE_PROFILES and any .env file are kept out, so that the result
    depends only on the file and the variables given."""
    environment = {name: value for name, value in os.environ.items()
                   if name not in REQUIRED and name not in ("COMPOSE_FILE", "COMPOSE_PROFILES")}
    command = [compose, "--env-file", "/dev/null", "-f", "docker-compose.yml" if text is None else "-", "config"]
    return subprocess.run(command + list(arguments), env=environment | variables, input=text, cwd=ROOT,
                          capture_output=True, text=True)


def config_main(argv):
    """`compose config --quiet` with the required variables, or without the one after --without."""
    without = argv[1] if argv[:1] == ["--without"] else None
    variables = {name: value for name, value in REQUIRED.items() if name != without}
    result = config(compose_binary(), variables, "--quiet")
    print(result.stdout + result.stderr, end="")
    return result.returncode


def env_example_problems(compose_text, example_text):
    """Every ${VARIABLE} docker-compose.yml interpolates is in .env.example, and nothing else is."""
    used = set(re.findall(r"(?<!\$)\$\{([A-Z_][A-Z0-9_]*)", compose_text))
    listed = set(re.findall(r"^([A-Z_][A-Z0-9_]*)=", example_text, re.M))
    found = [f"docker-compose.yml reads {name}, which .env.example does not list" for name in sorted(used - listed)]
    found += [f".env.example lists {name}, which docker-compose.yml does not read" for name in sorted(listed - used)]
    return found, f"{len(used)} variables"


def env_example_main(argv):
    return report(*env_example_problems(read("docker-compose.yml"), read(".env.example")))


def published(service, protocol):
    """{host port: container port} of the service's published ports of that protocol."""
    return {int(p["published"]): int(p["target"])
            for p in service.get("ports") or [] if p.get("protocol", "tcp") == protocol}


def _image_services(problems, built, products, edge):
    """Each service of the image; {service: its LAYER_PORT}."""
    edge_address = ((edge.get("networks") or {}).get("layerline") or {}).get("ipv4_address")
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
        problem = problems.under(name)
        if executables[name] not in products:
            problem(f"its command {service.get('command')} does not start an executable product of Package.swift "
                    f"({sorted(products)})")
        elif executables[name] != f"layer-{name}":
            problem(f"runs {executables[name]}, not layer-{name}")
        port = environment.get("LAYER_PORT")
        ports[name] = port
        test = " ".join((service.get("healthcheck") or {}).get("test") or [])
        if f"http://127.0.0.1:{port}/health/ready" not in test:
            problem(f"the health check does not probe /health/ready on port {port}: {test!r}")
        database = environment.get("LAYER_DATABASE_URL", "")
        if not database.startswith("postgres://") or "@postgres:5432/" not in database:
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
            problem("has no LAYER_CONTENT_LINK_SECRET" if name == "sync"
                    else "gets the key of content links, which only sync uses")
        if edge_address is None or environment.get("LAYER_TRUSTED_PROXIES") != edge_address:
            problem(f"LAYER_TRUSTED_PROXIES {environment.get('LAYER_TRUSTED_PROXIES')!r} is not the edge's address "
                    f"{edge_address!r}")
        if ((service.get("depends_on") or {}).get("postgres") or {}).get("condition") != "service_healthy":
            problem("does not wait for a healthy postgres")
        if service.get("read_only") is not True:
            problem("its root filesystem is not read-only")
        if name not in (edge.get("depends_on") or {}):
            problem("the edge does not depend on it")
    return ports


# Who calls whom, through which setting: (caller, variable, service called).
CALLS = (("sync", "LAYER_AUTH_URL", "auth"), ("auth", "LAYER_SYNC_URL", "sync"), ("sync", "LAYER_NAMES_URL", "names"),
         ("names", "LAYER_AUTH_URL", "auth"), ("voip", "LAYER_AUTH_URL", "auth"), ("voip", "LAYER_SYNC_URL", "sync"),
         ("voip", "LAYER_NAMES_URL", "names"))


def _peers(problems, built, ports):
    """How the services find one another, whom they wait for, and that only auth has the operator token."""
    for caller, variable, callee in CALLS:
        url = ((built.get(caller) or {}).get("environment") or {}).get(variable)
        if caller in built and url != f"http://{callee}:{ports.get(callee)}":
            problems.append(f"{caller}: {variable} {url!r} is not http://{callee}:{ports.get(callee)}")
    for name in ("sync", "names", "voip"):
        if "LAYER_OPERATOR_TOKEN" in ((built.get(name) or {}).get("environment") or {}):
            problems.append(f"{name}: gets the operator token, which it does not use")
    if "sync" in built and "auth" not in (built["sync"].get("depends_on") or {}):
        problems.append("sync: does not depend on auth")
    for name in ("names", "voip"):
        depends = (built.get(name) or {}).get("depends_on") or {}
        if name in built and (depends.get("auth") or {}).get("condition") != "service_healthy":
            problems.append(f"{name}: does not wait for a healthy auth")
    if "voip" in built and "sync" not in ((built["voip"].get("depends_on")) or {}):
        problems.append("voip: does not depend on sync, which rings the devices")
    region = ((built.get("names") or {}).get("environment") or {}).get("LAYER_NAMES_DEFAULT_REGION", "")
    if "names" in built and (len(region) != 2 or not region.isalpha() or not region.isupper()):
        problems.append(f"names: LAYER_NAMES_DEFAULT_REGION {region!r} is not an ISO 3166 alpha-2 code")


def _voip(problems, voip, coturn):
    """voip's TURN secret, its STUN port, and the URIs it hands out (which name coturn's ports)."""
    environment = voip.get("environment") or {}
    problem = problems.under("voip")
    if not environment.get("LAYER_TURN_SECRET"):
        problem("no LAYER_TURN_SECRET: GET /turn-credentials would answer 503")
    stun_port = int(environment.get("LAYER_STUN_PORT", 3478))
    if published(voip, "udp").get(stun_port) != stun_port:
        problem(f"its STUN port {stun_port} is not published as {stun_port}/udp (clients are told that port)")
    if environment.get("LAYER_STUN_HOST") not in ("0.0.0.0", "::"):
        problem(f"LAYER_STUN_HOST {environment.get('LAYER_STUN_HOST')!r} does not listen on every address")
    uris = [u.strip() for u in environment.get("LAYER_TURN_URIS", "").split(",") if u.strip()]
    if not [u for u in uris if re.fullmatch(rf"stun:[^:?]+:{stun_port}", u)]:
        problem(f"LAYER_TURN_URIS {uris} names no stun:<host>:{stun_port}")
    if coturn:
        parsed = coturn_args.options(coturn.get("command") or [])
        turn_port = (parsed.get("listening-port") or ["3478"])[0]
        for transport in ("udp", "tcp"):
            if not any(re.fullmatch(rf"turn:[^:?]+:{turn_port}\?transport={transport}", u) for u in uris):
                problem(f"LAYER_TURN_URIS {uris} names no turn:<host>:{turn_port}?transport={transport} (coturn)")
        hosts = {m.group(1) for m in (re.match(r"(?:stun|turn)s?:([^:?]+)", u) for u in uris) if m}
        if len(hosts) > 1:
            problem(f"LAYER_TURN_URIS names several hosts {sorted(hosts)}: compose runs them on one machine")


def _coturn(problems, resolved, coturn, voip):
    problem = problems.under("coturn")
    if not coturn_args.pinned(coturn.get("image", "")):
        problem(f"image {coturn.get('image')!r} is not coturn/coturn at a fixed version")
    # compose turns `$$` into `$`; the image's entrypoint then expands each argument in bash.
    raw = [argument.replace("$$", "$") for argument in coturn.get("command") or []]
    environment = coturn.get("environment") or {}
    parsed = coturn_args.options(coturn_args.entrypoint_expand(raw, environment))
    subnets = [(f"the compose network {name}", c["subnet"])
               for name, network in (resolved.get("networks") or {}).items()
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


def wiring_problems(resolved, products):
    """What is wrong with the resolved configuration (made with the REQUIRED values), and a summary."""
    services = resolved["services"]
    problems = Problems()
    built = {name: service for name, service in services.items()
             if (service.get("build") or {}).get("dockerfile") == "deploy/Dockerfile"}
    ports = _image_services(problems, built, products, services.get("edge", {}))
    _peers(problems, built, ports)
    voip, coturn = built.get("voip", {}), services.get("coturn")
    if voip:
        _voip(problems, voip, coturn)
    if coturn is None:
        problems.append("no coturn service")
    else:
        _coturn(problems, resolved, coturn, voip)
    host_ports = {}
    for name, service in services.items():
        for port in service.get("ports") or []:
            key = (str(port.get("host_ip", "")), int(port["published"]), port.get("protocol", "tcp"))
            if key in host_ports:
                problems.append(f"{name} and {host_ports[key]} both publish {key[1]}/{key[2]}")
            host_ports[key] = name
    if len(set(ports.values())) != len(ports):
        problems.append(f"two services share a port: {ports}")
    return problems, f"services: {ports}; host ports: {len(host_ports)}"


def resolved(text=None):
    """docker-compose.yml (or `text`) resolved with the REQUIRED values."""
    result = config(compose_binary(), REQUIRED, "--format", "json", text=text)
    if result.returncode != 0:
        raise SystemExit(result.stderr)
    return json.loads(result.stdout)


def main(argv):
    """argv: the executable products, separated by spaces."""
    return report(*wiring_problems(resolved(), set(argv[0].split())))
