"""The edge's routing table, deploy/nginx/nginx.conf.

Replays nginx's choice of location (exact match, else the longest prefix, unless it is ^~, else
the first matching regular expression, else that longest prefix) on the normalised path
(percent-decoded, dot segments resolved, repeated slashes merged) of sample requests, in the TLS
server block, and checks where each one goes. The push routes must pass WebSocket upgrades and
stream; a location that sets its own proxy headers must repeat the server-level ones; every
service executable has its upstream in deploy/nginx/upstreams.conf and routes to it; and every
upstream points at a compose service on that service's port."""

import posixpath
import re
import urllib.parse

import yaml

from .common import read, report


def strip_comments(text):
    """Comments start a line or follow a blank; a `#` inside a word (a URL's fragment) is no comment."""
    return re.sub(r"(^|\s)#[^\n]*", r"\1", text)


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


def upstreams(text):
    """{name: body} of the upstream blocks of an nginx configuration."""
    text = strip_comments(text)
    return {m.group(1): block(text, m.end() - 1) for m in re.finditer(r"upstream\s+([\w-]+)\s*\{", text)}


def nginx_seconds(text):
    """An nginx time (30, 30s, 10m, 500ms) in seconds; None when it is none."""
    match = re.fullmatch(r"(\d+)(ms|s|m|h)?", text)
    return int(match.group(1)) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600, None: 1}[match.group(2)] if match else None


class TLSServer:
    """The locations of the server block that listens on 443: (modifier, pattern, target, body),
    the target being an upstream, `return <status>` or "?"."""

    def __init__(self, conf):
        text = strip_comments(conf)
        servers = [block(text, m.end() - 1) for m in re.finditer(r"\bserver\s*\{", text)]
        tls = [s for s in servers if re.search(r"listen\s+443\b", s)]
        if len(tls) != 1:
            raise SystemExit("expected one server block that listens on 443")
        self.locations = []
        for match in re.finditer(r"location\s+(=|\^~|~\*|~)?\s*(\S+)\s*\{", tls[0]):
            body = block(tls[0], match.end() - 1)
            proxy = re.search(r"proxy_pass\s+http://([\w-]+)\s*;", body)
            returned = re.search(r"return\s+(\d+)", body)
            target = proxy.group(1) if proxy else f"return {returned.group(1)}" if returned else "?"
            self.locations.append((match.group(1) or "", match.group(2), target, body))
        outside = tls[0]
        for _, _, _, body in self.locations:
            outside = outside.replace(body, "")
        self.server_headers = set(re.findall(r"proxy_set_header\s+(\S+)", outside))

    def route(self, path):
        """(target, body) of the location nginx picks for a request path; ("none", "") for none."""
        path = urllib.parse.unquote(path.split("?")[0])
        path = re.sub(r"/+", "/", posixpath.normpath(path)) + ("/" if path.endswith("/") and path != "/" else "")
        for modifier, pattern, target, body in self.locations:
            if modifier == "=" and path == pattern:
                return target, body
        prefixes = [l for l in self.locations if l[0] in ("", "^~") and path.startswith(l[1])]
        longest = max(prefixes, key=lambda l: len(l[1]), default=None)
        if longest and longest[0] == "^~":
            return longest[2], longest[3]
        for modifier, pattern, target, body in self.locations:
            if modifier in ("~", "~*") and re.search(pattern, path, re.I if modifier == "~*" else 0):
                return target, body
        return (longest[2], longest[3]) if longest else ("none", "")


AUTH, SYNC, PUSH, NAMES, VOIP = "layer_auth", "layer_sync", "layer_sync_push", "layer_names", "layer_voip"
BLOCKED = "return 404"
EXPECTED = {
    AUTH: ["/", "/ping", "/ping?client=3.4.6", "/nonces", "/sessions", "/sessions/current", "/sessions/abc",
           "/certificates", "/apps/A", "/apps/layer%3A%2F%2F%2Fapps%2FA"],
    SYNC: ["/conversations", "/conversations/C", "/conversations/C/messages", "/conversations/C/mark_all_read",
           "/messages/M", "/messages/M/receipts", "/content", "/content/X", "/content/X/upload?expires=1&signature=s",
           "/content/X/download?expires=1&signature=s", "/sync", "/identities/u", "/identities/a%2Fb",
           "/announcements", "/announcements/N", "/announcements/N/receipts", "/apps/A/conversations",
           "/apps/A/conversations/C", "/apps/A/conversations/C/messages", "/apps/A/announcements",
           "/apps/A/users/u/conversations", "/apps/A/users/u/conversations/C/messages",
           "/apps/A/users/u/messages/M/receipts", "/apps/A/users/u/messages/M", "/apps/A/conversations/C/content",
           "/apps/A/conversations/C/content/K", "/apps/A/users/u/identity", "/apps/A/users/u/blocks",
           "/apps/A/users/u/blocks/v", "/apps/A/users/namespace%2F12345/conversations",
           "/apps/layer%3A%2F%2F%2Fapps%2FA/conversations", "/apps/A/users/u/badge",
           "/apps/A/users/namespace%2F1/badge",
           "/apps/A/notifications", "/apps/A/export_security", "/apps/A/exports", "/apps/A/exports/E",
           "/apps/A/exports/E/status", "/apps/A/exports/E/download", "/apps/A/export_schedule",
           "/apps/layer%3A%2F%2F%2Fapps%2FA/exports", "/identities", "/following", "/following/users/u",
           "/channels", "/channels/H", "/channels/H/messages", "/channels/H/members/u", "/apps/A/channels",
           "/apps/A/channels/H/members", "/apps/A/users/u/following", "/apps/A/users/u/following/v",
           "/apps/A/users/u/identities", "/apps/A/users/u", "/apps/A/users/u/sessions", "/apps/A/users/u/challenge",
           "/apps/A/users/namespace%2F1/sessions", "/apps/A/users/identity", "/apps/A/users/blocks",
           "/apps/layer%3A%2F%2F%2Fapps%2FA/users/u", "/apps/A/users/u/persons", "/apps/A/users/u/badges"],
    PUSH: ["/websocket", "/websocket?session_token=t", "/websocket/", "/events", "/events?session_token=t"],
    NAMES: ["/persons", "/persons/P", "/persons/layer%3A%2F%2F%2Fpersons%2FP", "/persons/deduplicate",
            "/persons/P/claim",
            "/persons/P/addresses/email%3Aada%40example.com", "/persons/P/addresses/physical%3A1%2F2%20Main%20St",
            "/resolve", "/resolve?address=email%3Aada%40example.com&known=phone%3A%2B1", "/route", "/address-books",
            "/address-books/B", "/address-books/B/duplicates", "/address-books/B/consolidate", "/apps/A/persons",
            "/apps/A/persons/deduplicate", "/apps/A/persons/P",
            "/apps/A/persons/duplicates?min_probability=0.9&page_size=10",
            "/apps/A/resolve?address=system%3Au", "/apps/A/route", "/apps/A/address-books", "/apps/A/address-books/B",
            "/apps/A/address-books/B/duplicates", "/apps/A/address-books/B/consolidate", "/apps/A/names/settings",
            "/apps/layer%3A%2F%2F%2Fapps%2FA/persons", "/apps/layer%3A%2F%2F%2Fapps%2FA/names/settings"],
    VOIP: ["/calls", "/calls?page_size=10&from_id=X", "/calls/C", "/calls/C/answer", "/calls/C/reject",
           "/calls/C/cancel", "/calls/C/hangup", "/calls/layer%3A%2F%2F%2Fcalls%2FC",
           "/calls/layer%3A%2F%2F%2Fcalls%2FC/answer", "/turn-credentials"],
    BLOCKED: ["/internal/v1/introspect", "/internal/v1/signals", "/conversations/../internal/v1/signals",
              "//internal/v1/signals", "/%69nternal/v1/signals", "/admin/apps", "/health/ready",
              "/health/live", "/metrics", "/openapi.yaml", "/conversationsx", "/syncing", "/nonce",
              "/apps/A/internal/v1/signals", "/internal/v1/relationships", "/persons/../internal/v1/relationships",
              "/%69nternal/v1/relationships", "/personsx", "/resolver", "/routes", "/address-book", "/names/settings",
              "/apps/A/internal/v1/relationships", "/call", "/callsx", "/turn",
              "/turn-credential", "/turn-credentialsx", "/calls/../internal/v1/signals",
              "/%63alls/../internal/v1/signals",
              "/calls/../admin/apps", "/apps/A/calls", "/apps/A/turn-credentials", "/stun", "/notifications",
              "/exports", "/export_security", "/badge", "/apps/A/exportsx"],
}


def problems(conf, compose_services, upstreams_conf, products):
    """What is wrong with nginx.conf (its text), given compose's services, upstreams.conf (its
    text) and the executable products; and a summary."""
    server = TLSServer(conf)
    found = []
    for target, paths in EXPECTED.items():
        for path in paths:
            got, _ = server.route(path)
            if target == BLOCKED and got == AUTH and path.startswith("/apps/"):
                continue  # the auth service's own 404 for a path it does not serve
            if got != target:
                found.append(f"{path} goes to {got}, not {target}")
    # A WebSocket at the root is the sync service's push too.
    _, root = server.route("/")
    if not re.search(r"if\s*\(\$http_upgrade\s*~\*\s*\^websocket\$\)\s*\{\s*rewrite\s+\^\s+/websocket\s+last;", root):
        found.append("/: a WebSocket upgrade there is not rewritten to /websocket")
    for path in ("/websocket", "/events"):
        _, body = server.route(path)
        directives = " ".join(body.split())
        for needed in ("proxy_set_header Upgrade $http_upgrade;", "proxy_set_header Connection $connection_upgrade;",
                       "proxy_buffering off;", "proxy_http_version 1.1;"):
            if needed not in directives:
                found.append(f"{path}: no '{needed}'")
        timeout = re.search(r"proxy_read_timeout\s+(\S+)\s*;", body)
        seconds = nginx_seconds(timeout.group(1)) if timeout else None
        if (seconds or 0) < 600:
            found.append(f"{path}: proxy_read_timeout is under 10 minutes")
    text = strip_comments(conf)
    if "map $http_upgrade $connection_upgrade" not in " ".join(text.split()):
        found.append("no map of $http_upgrade to $connection_upgrade")
    for modifier, pattern, target, body in server.locations:
        own = set(re.findall(r"proxy_set_header\s+(\S+)", body))
        if own and not server.server_headers <= own:
            found.append(f"location {pattern} drops the server-level headers {sorted(server.server_headers - own)}")
    if "include /etc/nginx/layer/upstreams.conf;" not in text:
        found.append("nginx.conf does not include /etc/nginx/layer/upstreams.conf")
    defined = upstreams(upstreams_conf)
    # Every service executable has its upstream (layer-sync: layer_sync) and paths routed to it.
    targets = {target for _, _, target, _ in server.locations}
    for product in sorted(products):
        if product.startswith("layer-"):
            upstream = product.replace("-", "_")
            if upstream not in defined:
                found.append(f"{product}: no upstream {upstream} in deploy/nginx/upstreams.conf")
            if upstream not in targets:
                found.append(f"{product}: no location of nginx.conf routes to {upstream}")
    for name in sorted(target for target in targets if not target.startswith("return")):
        server_line = re.search(r"server\s+([\w-]+):(\d+)", defined.get(name, ""))
        if not server_line:
            found.append(f"upstream {name} is not defined with a host:port")
            continue
        host, port = server_line.groups()
        environment = (compose_services.get(host) or {}).get("environment") or {}
        if str(environment.get("LAYER_PORT")) != port:
            found.append(f"upstream {name} points at {host}:{port}, but compose's {host} listens on "
                         f"{environment.get('LAYER_PORT')}")
    return found, f"{sum(map(len, EXPECTED.values()))} paths routed as intended"


def main(argv):
    """argv: the executable products, separated by spaces."""
    compose_services = yaml.safe_load(read("docker-compose.yml"))["services"]
    return report(*problems(read("deploy/nginx/nginx.conf"), compose_services, read("deploy/nginx/upstreams.conf"),
                            set(argv[0].split())))
