#!/usr/bin/env python3
"""A stand-in for APNs for benchmarks: HTTP/2 over TLS, `POST /3/device/<token>` answered 200.

    python3 fake-apns.py --port 0 --certificate cert.pem --key key.pem --ready ready.json --log pushes.jsonl

Needs the `h2` package (the benchmark installs it into .venv-tools). Prints nothing; writes
`{"port": N}` to `--ready` once it listens, and one line per push to `--log`:
`{"at": <arrival, unix seconds>, "token": …, "message": <layer.message_identifier>, "type": <apns-push-type>}`.
Stops on SIGTERM. It checks the request's shape (an `authorization: bearer` JWT, `apns-topic`,
`apns-push-type`, a JSON body with `aps`), answers 400 with APNs' `{"reason"}` when it is wrong,
and otherwise 200 with an `apns-id`.
"""

import argparse
import asyncio
import json
import signal
import ssl
import time
import uuid

import h2.config
import h2.connection
import h2.events


class Connection:
    def __init__(self, reader, writer, log):
        self.reader = reader
        self.writer = writer
        self.log = log
        self.h2 = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=False))
        self.streams = {}

    async def run(self):
        self.h2.initiate_connection()
        self.writer.write(self.h2.data_to_send())
        while True:
            data = await self.reader.read(65536)
            if not data:
                break
            for event in self.h2.receive_data(data):
                if isinstance(event, h2.events.RequestReceived):
                    self.streams[event.stream_id] = (dict((k.decode(), v.decode()) for k, v in event.headers), bytearray())
                elif isinstance(event, h2.events.DataReceived):
                    self.streams[event.stream_id][1].extend(event.data)
                    self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                elif isinstance(event, h2.events.StreamEnded):
                    self.answer(event.stream_id)
            self.writer.write(self.h2.data_to_send())
            await self.writer.drain()
        self.writer.close()

    def answer(self, stream):
        headers, body = self.streams.pop(stream)
        reason = None
        try:
            payload = json.loads(body)
        except ValueError:
            payload = None
        if headers.get(":method") != "POST" or not headers.get(":path", "").startswith("/3/device/"):
            status, reason = 404, "BadPath"
        elif not headers.get("authorization", "").startswith("bearer "):
            status, reason = 403, "MissingProviderToken"
        elif not headers.get("apns-topic"):
            status, reason = 400, "MissingTopic"
        elif headers.get("apns-push-type") not in ("alert", "background"):
            status, reason = 400, "InvalidPushType"
        elif not isinstance(payload, dict) or "aps" not in payload:
            status, reason = 400, "PayloadEmpty"
        else:
            status = 200
            self.log.write(json.dumps({
                "at": time.time(), "token": headers[":path"].rsplit("/", 1)[-1],
                "message": (payload.get("layer") or {}).get("message_identifier"),
                "type": headers["apns-push-type"],
            }) + "\n")
        answer = json.dumps({"reason": reason}).encode() if reason else b""
        response = [(":status", str(status)), ("apns-id", headers.get("apns-id") or str(uuid.uuid4()))]
        if answer:
            response.append(("content-type", "application/json"))
        self.h2.send_headers(stream, response, end_stream=not answer)
        if answer:
            self.h2.send_data(stream, answer, end_stream=True)


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--certificate", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--ready", required=True)
    parser.add_argument("--log", required=True)
    args = parser.parse_args()

    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(args.certificate, args.key)
    context.set_alpn_protocols(["h2"])
    log = open(args.log, "a", buffering=1)

    async def serve(reader, writer):
        try:
            await Connection(reader, writer, log).run()
        except (ConnectionError, h2.exceptions.ProtocolError, asyncio.CancelledError):
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", args.port, ssl=context)
    with open(args.ready, "w") as file:
        json.dump({"port": server.sockets[0].getsockname()[1]}, file)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    async with server:
        await stop.wait()
    log.close()


if __name__ == "__main__":
    import h2.exceptions  # noqa: F401  (for the handler above)
    asyncio.run(main())
