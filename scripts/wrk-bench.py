#!/usr/bin/env python3
"""Messages per second into `layer dev`, measured from outside the process with wrk.

    python3 scripts/wrk-bench.py [--seconds 15] [--connections 8] [--threads 2] [--senders 8] [--webhook] [--push]

Builds the release `layer`, starts `layer dev` on a private PostgreSQL (fsync on), signs in
`--senders` users and one listener, and gives each sender a two-person conversation with the
listener, whose device holds a WebSocket open and counts the messages pushed to it. Then wrk sends
`POST /conversations/<id>/messages` round-robin over the senders' conversations from
`--connections` connections for `--seconds` seconds. Prints the rate wrk saw, the answers that
were not 201, what reached the listening device, and the CPU time per message of the server, of
PostgreSQL and of wrk itself (all of it on this machine). The same wrk script serves any server
with the same API (`--url` to skip starting one; no CPU figures then).

With `--webhook`, the app also has a 3.0 webhook for every event, whose receiver runs in this
script (HTTP/1.1 keep-alive, each signature checked): it reports how many events reached it, and
its CPU counts with the listening device's.

With `--push`, the app has APNs credentials and the listener is offline, its phone holding an APNs
token: every message becomes a push, sent to `scripts/fake-apns.py` (HTTP/2 over TLS, started here
with a certificate made for it; `h2` is installed into .venv-tools). It reports how many pushes
arrived, how long after the send (the server's `layer_push_delay_seconds`: from the send's commit
to the push leaving), and when the last one arrived.
"""

import argparse
import base64
import hashlib
import hmac
import http.server
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ACCEPT = "application/vnd.layer+json; version=3.0"


def call(base, method, path, body=None, session=None, headers=None):
    request = urllib.request.Request(base + path, method=method)
    request.add_header("Accept", ACCEPT)
    if session:
        request.add_header("Authorization", f'Layer session-token="{session}"')
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, data, timeout=30) as response:
        text = response.read()
        return json.loads(text) if text else None


def sign_in(base, layer, data_dir, app_id, user):
    nonce = call(base, "POST", "/nonces")["nonce"]
    token = subprocess.run(
        [layer, "token", "--user", user, "--nonce", nonce, "--data-dir", data_dir],
        check=True, capture_output=True, text=True).stdout.strip()
    return call(base, "POST", "/sessions", {"identity_token": token, "app_id": app_id})["session_token"]


class Listener(threading.Thread):
    """A device on `GET /websocket` that counts the messages pushed to it (RFC 6455, by hand)."""

    def __init__(self, host, port, session):
        super().__init__(daemon=True)
        self.messages = 0
        self.sock = socket.create_connection((host, port))
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((
            f"GET /websocket?session_token={session} HTTP/1.1\r\nHost: {host}:{port}\r\n"
            "Upgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
            "Sec-WebSocket-Protocol: layer-3.0\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += self.sock.recv(1)
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise SystemExit(f"the WebSocket was refused: {head!r}")

    def read(self, count):
        data = b""
        while len(data) < count:
            chunk = self.sock.recv(count - len(data))
            if not chunk:
                raise EOFError
            data += chunk
        return data

    def run(self):
        try:
            while True:
                first, second = self.read(2)
                length = second & 0x7F
                if length == 126:
                    length = int.from_bytes(self.read(2), "big")
                elif length == 127:
                    length = int.from_bytes(self.read(8), "big")
                payload = self.read(length)
                opcode = first & 0x0F
                if opcode == 0x9:  # ping: answer with a masked pong
                    mask = os.urandom(4)
                    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
                    self.sock.sendall(bytes([0x8A, 0x80 | len(payload)]) + mask + masked)
                elif opcode == 0x1 and b'"operation":"create"' in payload and b'"type":"Message"' in payload:
                    self.messages += 1
        except (EOFError, OSError):
            pass


class WebhookReceiver(threading.Thread):
    """A webhook's receiver: answers the challenge and counts the deliveries whose signature holds."""

    SECRET = b"bench-secret"

    def __init__(self):
        super().__init__(daemon=True)
        self.delivered = 0
        self.bad = 0
        self.lock = threading.Lock()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                challenge = self.path.split("verification_challenge=", 1)[-1].encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(challenge)))
                self.end_headers()
                self.wfile.write(challenge)

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                signature = hmac.new(WebhookReceiver.SECRET, body, hashlib.sha1).hexdigest()
                good = hmac.compare_digest(signature, self.headers.get("layer-webhook-signature", ""))
                with receiver.lock:
                    if good:
                        receiver.delivered += 1
                    else:
                        receiver.bad += 1
                self.send_response(204)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]

    def run(self):
        self.server.serve_forever()


def register_webhook(base, data_dir, app_id, port):
    """A 3.0 webhook of every event to the receiver on `port`, active before this returns."""
    with open(os.path.join(data_dir, "dev.json")) as file:
        operator = json.load(file)["operator_token"]
    app = app_id.rsplit("/", 1)[-1]
    token = call(base, "POST", f"/admin/apps/{app}/tokens", headers={"Authorization": f"Bearer {operator}"})["token"]
    auth = {"Authorization": f"Bearer {token}"}
    events = [
        "Message.created", "Message.deleted", "Receipt.created", "Conversation.created", "Conversation.updated",
        "Conversation.deleted", "Participation.created", "Participation.deleted", "Channel.created",
        "Channel.updated", "Channel.deleted", "Membership.created", "Membership.deleted",
    ]
    webhook = call(base, "POST", f"/apps/{app}/webhooks", {
        "version": "3.0", "target_url": f"http://127.0.0.1:{port}/hook", "events": events,
        "secret": WebhookReceiver.SECRET.decode(),
    }, headers=auth)
    path = f"/apps/{app}/webhooks/{webhook['id'].rsplit('/', 1)[-1]}"
    for _ in range(100):
        if call(base, "GET", path, headers=auth)["status"] == "active":
            return
        time.sleep(0.1)
    raise SystemExit("the webhook did not turn active")


class FakeAPNs:
    """scripts/fake-apns.py, with a certificate of its own that layer dev is told to trust."""

    def __init__(self, directory):
        self.directory = directory
        venv = os.path.join(ROOT, ".venv-tools")
        if not os.path.exists(os.path.join(venv, "bin/python")):
            subprocess.run(["python3", "-m", "venv", venv], check=True)
        python = os.path.join(venv, "bin/python")
        subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "h2==4.1.0"], check=True)
        self.certificate = os.path.join(directory, "apns-cert.pem")
        key = os.path.join(directory, "apns-cert-key.pem")
        subprocess.run([
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", key, "-out", self.certificate, "-days", "1", "-subj", "/CN=127.0.0.1",
            "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
        self.signing_key = os.path.join(directory, "AuthKey.p8")
        subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                        "-out", self.signing_key], check=True, capture_output=True)
        ready = os.path.join(directory, "apns-ready.json")
        self.log = os.path.join(directory, "pushes.jsonl")
        self.process = subprocess.Popen(
            [python, os.path.join(ROOT, "scripts/fake-apns.py"), "--certificate", self.certificate, "--key", key,
             "--ready", ready, "--log", self.log], start_new_session=True)
        deadline = time.time() + 30
        while not os.path.exists(ready) or os.path.getsize(ready) == 0:
            if time.time() > deadline or self.process.poll() is not None:
                raise SystemExit("fake-apns.py did not start")
            time.sleep(0.1)
        with open(ready) as file:
            self.port = json.load(file)["port"]
        self.environment = {"LAYER_APNS_URL": f"https://127.0.0.1:{self.port}", "LAYER_PUSH_CA_FILE": self.certificate}

    def configure(self, base, data_dir, app_id, listener_session):
        """The app's APNs credentials, and the listener's phone's token."""
        with open(os.path.join(data_dir, "dev.json")) as file:
            operator = json.load(file)["operator_token"]
        with open(self.signing_key) as file:
            key = file.read()
        app = app_id.rsplit("/", 1)[-1]
        call(base, "PUT", f"/admin/apps/{app}/push/apns", {
            "team_id": "TEAM123456", "key_id": "KEY1234567", "topic": "com.example.bench", "private_key": key},
            headers={"Authorization": f"Bearer {operator}"})
        call(base, "POST", "/push_tokens", {"token": os.urandom(32).hex(), "type": "apns", "device_id": "phone"},
             listener_session)

    def metric(self, base):
        """layer_push_delay_seconds: each bucket's count, and the count."""
        with urllib.request.urlopen(f"{base}/metrics") as response:
            text = response.read().decode()
        buckets = {}
        count = 0
        for line in text.splitlines():
            bucket = re.match(r'layer_push_delay_seconds_bucket\{le="([^"]+)"\} (\S+)', line)
            if bucket:
                buckets[bucket.group(1)] = float(bucket.group(2))
            elif line.startswith("layer_push_delay_seconds_count"):
                count = float(line.split()[-1])
        return buckets, count

    def mark(self, base):
        self.cpu_before = cpu_seconds(self.process.pid)
        self.before = self.metric(base)
        self.pushed_before = self.pushes()

    def pushes(self):
        with open(self.log) as file:
            return [json.loads(line) for line in file if line.strip()]

    def report(self, base, messages, ended):
        deadline = ended + 120
        while len(self.pushes()) - len(self.pushed_before) < messages and time.time() < deadline:
            time.sleep(0.5)
        pushes = self.pushes()[len(self.pushed_before):]
        fake_cpu = cpu_seconds(self.process.pid) - self.cpu_before
        buckets, count = self.metric(base)
        sent = count - self.before[1]
        within = lambda bound: (buckets.get(bound, 0) - self.before[0].get(bound, 0)) / max(sent, 1) * 100
        last = max((push["at"] for push in pushes), default=ended) - ended
        print(
            f"pushed through APNs: {len(pushes)} for {messages} messages; the last {last:.1f} s after the run; "
            f"the fake APNs took {fake_cpu / max(len(pushes), 1) * 1000:.2f} ms of CPU per push")
        bounds = sorted(buckets, key=lambda bound: float(bound) if bound != "+Inf" else float("inf"))
        print("left within (server's delay from commit to push): " + ", ".join(
            f"{float(bound) * 1000:g} ms {within(bound):.1f} %" for bound in bounds if bound != "+Inf"
            and float(bound) <= 1))

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


def cpu_seconds(pid):
    """User and system CPU seconds of a process, from /proc."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return 0.0


def postgres_cpu():
    """CPU seconds of each PostgreSQL process, by pid."""
    seconds = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/comm") as comm:
                    if comm.read().startswith("postgres"):
                        seconds[entry] = cpu_seconds(entry)
            except OSError:
                pass
    return seconds


def measure(server):
    return {"server": cpu_seconds(server.pid), "postgres": postgres_cpu(), "times": os.times()}


def wrk_script(path, requests):
    lines = ["local requests = {"]
    for conversation, session in requests:
        lines.append(
            f'  wrk.format("POST", "/conversations/{conversation}/messages", '
            f'{{["Accept"] = "{ACCEPT}", ["Content-Type"] = "application/json", '
            f'["Authorization"] = \'Layer session-token="{session}"\'}}, '
            '\'{"parts":[{"mime_type":"text/plain","body":"Hello from wrk"}]}\'),')
    lines += [
        "}",
        "local counter = 0",
        "function init(args) counter = math.random(#requests) end",
        "function request()",
        "  counter = counter % #requests + 1",
        "  return requests[counter]",
        "end",
        "local others = 0",
        "function response(status, headers, body) if status ~= 201 then others = others + 1 end end",
        "function done(summary, latency, requests)",
        '  io.write(string.format("latency p50 %.2f ms, p99 %.2f ms\\n", latency:percentile(50) / 1000, '
        "latency:percentile(99) / 1000))",
        "end",
    ]
    with open(path, "w") as file:
        file.write("\n".join(lines) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=int, default=15)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--senders", type=int, default=8)
    parser.add_argument("--port", type=int, default=18380)
    parser.add_argument("--no-build", action="store_true", help="use the release build as it is")
    parser.add_argument("--webhook", action="store_true", help="with a webhook that gets every event")
    parser.add_argument("--push", action="store_true", help="the listener offline, pushed to through APNs")
    args = parser.parse_args()

    if not shutil.which("wrk"):
        sudo = [] if os.geteuid() == 0 else ["sudo"]
        subprocess.run(sudo + ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "wrk"], check=True)
    subprocess.run(["bash", os.path.join(ROOT, "scripts/ensure-deps.sh")], check=True)
    if not args.no_build:
        subprocess.run(["swift", "build", "-c", "release", "--product", "layer"], cwd=ROOT, check=True)
    layer = os.path.join(ROOT, ".build/release/layer")

    data_dir = tempfile.mkdtemp(prefix="layer-wrk-")
    base = f"http://127.0.0.1:{args.port}"
    apns = FakeAPNs(data_dir) if args.push else None
    server = subprocess.Popen(
        [layer, "dev", "--port", str(args.port), "--stun-port", "0", "--data-dir", data_dir],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        env={**os.environ, **(apns.environment if apns else {})})
    try:
        deadline = time.time() + 120
        while True:
            try:
                call(base, "GET", "/health/ready")
                if os.path.exists(os.path.join(data_dir, "dev.json")):
                    break
                time.sleep(0.5)
            except Exception:
                if time.time() > deadline or server.poll() is not None:
                    raise SystemExit("layer dev did not become ready")
                time.sleep(0.5)
        with open(os.path.join(data_dir, "dev.json")) as file:
            app_id = json.load(file)["app_id"]

        receiver = None
        if args.webhook:
            receiver = WebhookReceiver()
            receiver.start()
            register_webhook(base, data_dir, app_id, receiver.port)
        listener_session = sign_in(base, layer, data_dir, app_id, "listener")
        if apns:
            apns.configure(base, data_dir, app_id, listener_session)
        requests = []
        for index in range(args.senders):
            session = sign_in(base, layer, data_dir, app_id, f"sender-{index}")
            conversation = call(
                base, "POST", "/conversations", {"participants": ["layer:///identities/listener"]}, session)
            requests.append((conversation["id"].rsplit("/", 1)[1], session))
        # With --push the listener is offline: its phone hears of the messages through APNs.
        listener = None if apns else Listener("127.0.0.1", args.port, listener_session)
        if listener:
            listener.start()

        script = os.path.join(data_dir, "send.lua")
        wrk_script(script, requests)
        wrk = ["wrk", f"-t{args.threads}", f"-c{args.connections}", "-s", script, base]
        # A warm-up, so that connections and caches are in place before the measured run.
        subprocess.run(wrk + ["-d2s"], capture_output=True, check=True)
        time.sleep(2)
        pushed = listener.messages if listener else 0
        hooked = receiver.delivered if receiver else 0
        if apns:
            apns.mark(base)
        before = measure(server)
        result = subprocess.run(wrk + [f"-d{args.seconds}s"], capture_output=True, text=True, check=True)
        after = measure(server)
        # What is still on its way to the listening device.
        time.sleep(2)

        output = result.stdout
        total = int(re.search(r"(\d+) requests in", output).group(1))
        failed = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
        failed = int(failed.group(1)) if failed else 0
        rate = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
        latency = re.search(r"latency p50 .*", output).group(0)
        wrk_cpu = (after["times"].children_user + after["times"].children_system) - (
            before["times"].children_user + before["times"].children_system)
        listener_cpu = (after["times"].user + after["times"].system) - (before["times"].user + before["times"].system)
        server_cpu = after["server"] - before["server"]
        postgres_cpu = sum(seconds - before["postgres"].get(pid, 0) for pid, seconds in after["postgres"].items())
        per = lambda seconds: seconds / max(total, 1) * 1000
        print(f"{total} messages in {args.seconds} s from {args.connections} connections: {rate:.0f}/s ({latency})")
        print(
            f"answers other than 201: {failed}; pushed to the listening device: "
            f"{listener.messages - pushed if listener else 'none (offline)'}")
        print(
            f"CPU per message: server {per(server_cpu):.2f} ms, PostgreSQL {per(postgres_cpu):.2f} ms, "
            f"wrk {per(wrk_cpu):.2f} ms, listening device {per(listener_cpu):.2f} ms; in all "
            f"{per(server_cpu + postgres_cpu + wrk_cpu + listener_cpu):.2f} ms ({os.cpu_count()} cores)")
        if receiver:
            # Message.created of each message sent in the run, and whatever the warm-up left.
            ended = time.time() - 2
            while receiver.delivered - hooked < total - failed and time.time() < ended + 120:
                time.sleep(0.5)
            waited = time.time() - ended
            print(
                f"delivered to the webhook: {receiver.delivered - hooked} events for {total - failed} messages "
                f"({waited:.1f} s after the run), bad signatures: {receiver.bad}")
        if apns:
            apns.report(base, total - failed, time.time() - 2)
    finally:
        if apns:
            apns.stop()
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
