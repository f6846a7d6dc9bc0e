#!/usr/bin/env python3
"""The first sync of a new device, as a client in a process of its own sees it.

`layer-bench sync --first-sync N` runs this after filling the history: it posts `/sync` from
anchor 0 with the default policy and page size, following `more` to the end, on one kept-alive
connection, and prints the time from the first request to the last byte of the last page. With
`--decode` every answer is parsed as a client would (json.loads); without it only `anchor` and
`more`, which the server writes first, are read from each answer.

    python3 scripts/first-sync-client.py --base http://127.0.0.1:8080 --token TOKEN --runs 3
"""

import argparse
import http.client
import json
import re
import time
import urllib.parse

HEAD = re.compile(rb'^\{"anchor":("(?:[^"\\]|\\.)*"|-?[0-9]+),"more":(true|false)')


def first_sync(base: str, token: str, decode: bool) -> tuple[float, int, int, int]:
    """One first sync: seconds, pages, operations (0 unless decoded), bytes."""
    url = urllib.parse.urlsplit(base)
    connection = http.client.HTTPConnection(url.hostname, url.port or 80, timeout=120)
    headers = {
        "Accept": "application/vnd.layer+json; version=3.0",
        "Authorization": f'Layer session-token="{token}"',
        "Content-Type": "application/json",
    }
    anchor: object = 0
    pages = operations = size = 0
    start = time.perf_counter()
    while True:
        connection.request("POST", "/sync", body=json.dumps({"anchor": anchor}), headers=headers)
        response = connection.getresponse()
        body = response.read()
        if response.status != 200:
            raise SystemExit(f"/sync answered {response.status}: {body[:300]!r}")
        pages += 1
        size += len(body)
        if decode:
            page = json.loads(body)
            operations += len(page.get("operations", []))
            anchor, more = page["anchor"], page.get("more") is True
        else:
            head = HEAD.match(body)
            if head is None:
                raise SystemExit(f"unexpected answer: {body[:200]!r}")
            anchor, more = json.loads(head.group(1)), head.group(2) == b"true"
        if not more:
            break
    elapsed = time.perf_counter() - start
    connection.close()
    return elapsed, pages, operations, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", required=True, help="the Client API's base URL")
    parser.add_argument("--token", required=True, help="the new device's session token")
    parser.add_argument("--runs", type=int, default=3)
    arguments = parser.parse_args()
    for decode in (False, True):
        for _ in range(arguments.runs):
            seconds, pages, operations, size = first_sync(arguments.base, arguments.token, decode)
            what = f"every answer decoded, {operations} operations" if decode else "anchor and more read"
            print(
                f"first sync from a separate process ({what}): {seconds * 1000:.0f} ms, "
                f"{pages} pages, {size / 1e6:.1f} MB",
                flush=True,
            )


if __name__ == "__main__":
    main()
