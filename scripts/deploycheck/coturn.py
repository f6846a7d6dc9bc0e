"""coturn's command line, for the compose and Kubernetes checks: as its image's entrypoint runs
it (each argument expanded by `eval "echo $arg"` in bash, with the container's environment), and
what that command line must say."""

import ipaddress
import shutil
import subprocess

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
            problems.append(f"denied-peer-ip {value!r} is not an address or a range first-last "
                            "(coturn would not start)")
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
