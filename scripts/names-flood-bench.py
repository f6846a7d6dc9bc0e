#!/usr/bin/env python3
"""Issue 25, finding 3, measured from outside: one user's 4 MB `POST /persons` (1,000 records of
85 addresses each, all carrying the user's own system address, so that they are one person) and,
five seconds later, another user's one-record write. Prints how long each took and what it
answered, and the highest resident memory of the server process from the start until 20 s after
both answered (the process is stopped, and that said, if it passes 6 GB).

    .build/debug/layer dev --data-dir /tmp/flood-dev --port 8090 &
    python3 scripts/names-flood-bench.py /tmp/flood-dev .build/debug/layer $! [delay in seconds, 5]

Standard library only.
"""
import json, os, signal, subprocess, sys, threading, time, urllib.error, urllib.request

ACCEPT = "application/vnd.layer+json; version=3.0"
# Seconds between the two writes: long enough for the big one to be read and validated, so that
# it holds the app's writer lock when the small one comes.
DELAY = 5


def call(base, method, path, body=None, session=None, timeout=300):
    request = urllib.request.Request(base + path, method=method, data=None if body is None else json.dumps(body, separators=(",", ":")).encode())
    request.add_header("Content-Type", "application/json")
    request.add_header("Accept", ACCEPT)
    if session:
        request.add_header("Authorization", f'Layer session-token="{session}"')
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def session(base, data_dir, layer, info, user):
    _, body = call(base, "POST", "/nonces")
    nonce = json.loads(body)["nonce"]
    token = subprocess.run([layer, "token", "--data-dir", data_dir, "--user", user, "--nonce", nonce],
                           check=True, capture_output=True, text=True).stdout.strip()
    status, body = call(base, "POST", "/sessions", {"identity_token": token, "app_id": info["app_id"]})
    assert status == 201, body
    return json.loads(body)["session_token"]


def resident_bytes(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def main(data_dir, layer, pid):
    info = json.load(open(os.path.join(data_dir, "dev.json")))
    base = info["base_url"]
    mallory = session(base, data_dir, layer, info, "mallory")
    bob = session(base, data_dir, layer, info, "bob")
    records = [{"last_name": f"Lory {i}",
                "addresses": [{"type": "system", "value": "mallory"}]
                + [{"type": "email", "value": f"m{i}x{j}@ex.co"} for j in range(84)]} for i in range(1000)]
    body = {"persons": records}
    print(f"big request: {len(json.dumps(body, separators=(',', ':'))) / 1e6:.2f} MB, 1,000 records x 85 addresses")
    results, peak = {}, [resident_bytes(pid)]

    def send(name, who, payload):
        start = time.monotonic()
        status, answer = call(base, "POST", "/persons", payload, session=who)
        results[name] = (status, time.monotonic() - start, answer[:160].decode(errors="replace"))

    big = threading.Thread(target=send, args=("big (mallory)", mallory, body))
    small = threading.Thread(target=send, args=("small (bob)", bob, {"persons": [
        {"first_name": "Bob", "last_name": "Small", "addresses": [{"type": "system", "value": "bob"}]}]}))
    big.start()
    time.sleep(DELAY)
    small.start()
    finished_at = None
    while True:
        peak.append(resident_bytes(pid))
        if peak[-1] > 6e9:
            print(f"resident memory passed 6 GB ({peak[-1] / 1e9:.1f} GB): stopping the server")
            os.kill(pid, signal.SIGKILL)
            break
        if finished_at is None and not big.is_alive() and not small.is_alive():
            finished_at = time.monotonic()
        if finished_at is not None and time.monotonic() - finished_at > 20:
            break
        time.sleep(0.2)
    big.join(timeout=5)
    small.join(timeout=5)
    for name, (status, seconds, answer) in sorted(results.items()):
        print(f"{name}: {status} in {seconds:.2f} s  {answer}")
    print(f"server resident memory: {peak[0] / 1e6:.0f} MB before, {max(peak) / 1e6:.0f} MB at most")


if __name__ == "__main__":
    if len(sys.argv) > 4:
        DELAY = float(sys.argv[4])
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
