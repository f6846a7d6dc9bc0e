#!/usr/bin/env python3
"""A webhook receiver to try Layerline's webhooks with (standard library only).

    python3 scripts/webhook-receiver.py --port 9000 --secret 's3cret' [--log events.jsonl]

Answers the verification challenge (`GET /?verification_challenge=<random>` with 200 and the
challenge as the body), and for each delivery (`POST`) checks `layer-webhook-signature`, the hex
HMAC-SHA1 of the raw body keyed by the webhook's secret, before it trusts the body: a delivery
with a wrong or missing signature is answered 403 and not logged. Accepted deliveries are
answered 204 and printed (and appended to --log) as one JSON line each, with their headers.
"""

import argparse
import hashlib
import hmac
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse


def signature_is_valid(secret: bytes, body: bytes, signature: str) -> bool:
    expected = hmac.new(secret, body, hashlib.sha1).hexdigest()
    return hmac.compare_digest(expected, signature.strip().lower())


def handler(secret: bytes, log_path):
    class Receiver(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            challenge = parse_qs(urlparse(self.path).query).get("verification_challenge", [""])[0]
            body = challenge.encode()
            self.send_response(200 if challenge else 400)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if not signature_is_valid(secret, body, self.headers.get("layer-webhook-signature", "")):
                self.send_response(403)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            line = json.dumps({
                "type": self.headers.get("layer-webhook-event-type"),
                "request_id": self.headers.get("layer-webhook-request-id"),
                "webhook": self.headers.get("layer-webhook-id"),
                "body": json.loads(body or b"null"),
            })
            print(line, flush=True)
            if log_path:
                with open(log_path, "a") as log:
                    log.write(line + "\n")
            self.send_response(204)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format, *args):
            pass

    return Receiver


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=9000)
    parser.add_argument("--secret", required=True)
    parser.add_argument("--log")
    arguments = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", arguments.port), handler(arguments.secret.encode(), arguments.log))
    print(f"listening on http://127.0.0.1:{arguments.port}/", file=sys.stderr, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
