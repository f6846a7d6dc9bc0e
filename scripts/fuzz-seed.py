"""Prepares a running `layer dev` for scripts/fuzz and writes schemathesis's configuration.

Usage: python3 scripts/fuzz-seed.py LAYER DATA_DIR OUT_DIR MAX_EXAMPLES CACHE_DIR DOCUMENT...

Schemathesis generates path parameters at random, and a random conversation or app id only ever
reaches the "not found" branch of a route. So this signs in two users the way a client does
(a nonce, an identity token from `layer token`, POST /sessions), mints Server API tokens with
`layer admin`, makes a few real objects (conversations, channels, messages, an announcement, content, a
device certificate, a provider key; persons, a claimed one among them, and address books of the
names service; calls of the VoIP service) and hands their ids to schemathesis as dictionaries: most generated requests use a
real id, the rest a generated one. The objects are spares wherever a
fuzzed request could destroy what the run itself needs: the credentials schemathesis sends are
never among the values it may delete, revoke, suspend or challenge.

The same ids also become the examples of the path parameters in a copy of each DOCUMENT
(OUT_DIR/<name>.yaml), and of the request bodies that hold ids (the names service's route and
consolidate requests): schemathesis's examples and coverage phases build every case from the
examples, and the documents' own examples name nothing that exists. Nothing else in the documents
changes. Writes OUT_DIR/schemathesis.toml (credentials, the dictionaries, the generation settings)
and prints nothing on success. Needs PyYAML, which schemathesis brings.
"""

import json
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request

import yaml

ACCEPT = "application/vnd.layer+json; version=3.0"


def main() -> None:
    layer, data_dir, out_dir, max_examples, cache = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
    documents = sys.argv[6:]
    with open(f"{data_dir}/dev.json") as file:
        dev = json.load(file)
    base = dev["base_url"]
    app = dev["app_id"]
    app_uuid = app.rsplit("/", 1)[1]

    def call(method, path, body=None, headers=None, expect=(200, 201, 202, 204), raw=None):
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        request = urllib.request.Request(base + path, data=data, method=method)
        request.add_header("Accept", ACCEPT)
        if body is not None:
            request.add_header("Content-Type", "application/json")
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                status, text = response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            status, text = error.code, error.read().decode()
        if status not in expect:
            sys.exit(f"fuzz-seed: {method} {path} answered {status}: {text}")
        return json.loads(text) if text else None

    def layer_command(*arguments):
        result = subprocess.run([layer, *arguments, "--data-dir", data_dir], capture_output=True, text=True)
        if result.returncode != 0:
            sys.exit(f"fuzz-seed: layer {' '.join(arguments)} failed: {result.stdout}{result.stderr}")
        return result.stdout.strip()

    def sign_in(user):
        nonce = call("POST", "/nonces")["nonce"]
        token = layer_command("token", "--user", user, "--nonce", nonce, "--display-name", user.title())
        return call("POST", "/sessions", {"identity_token": token, "app_id": app})["session_token"]

    def server_token():
        lines = dict(line.split(": ", 1) for line in layer_command("admin", "create-token", "--app", app).splitlines())
        return lines["id"], lines["token"]

    def uuid_of(identifier):
        return identifier.rsplit("/", 1)[1]

    # The credentials schemathesis sends, and spares of each kind for the routes that end one.
    alice = sign_in("fuzz-alice")
    spare_session = sign_in("fuzz-alice")
    bob = sign_in("fuzz-bob")
    sign_in("fuzz-carol")
    _, server = server_token()
    spare_token_id, _ = server_token()
    as_alice = {"Authorization": f'Layer session-token="{alice}"'}
    as_bob = {"Authorization": f'Layer session-token="{bob}"'}
    as_server = {"Authorization": f"Bearer {server}"}

    # A provider and key of their own, so that disabling or deleting them leaves the demo key alone.
    added = layer_command("admin", "add-key", "--app", app, "--public-key", dev["private_key_path"])
    keys = dict(line.split(": ", 1) for line in added.splitlines())

    # Conversations of Alice and Bob, with messages; Bob also has one of his own with Carol.
    conversations, messages = [], []
    for body in [
        {"participants": ["fuzz-bob"], "metadata": {"title": "Fuzzing"}},
        {"participants": ["fuzz-bob", "fuzz-carol"], "distinct": False},
    ]:
        conversation = call("POST", "/conversations", body, as_alice)["id"]
        conversations.append(conversation)
        path = f"/conversations/{uuid_of(conversation)}/messages"
        for text in ["hello", "world"]:
            sent = call("POST", path, {"parts": [{"mime_type": "text/plain", "body": text}]}, as_alice)
            messages.append(sent["id"])
    bobs = call("POST", "/conversations", {"participants": ["fuzz-carol"]}, as_bob)["id"]
    conversations.append(bobs)
    messages.append(
        call("POST", f"/conversations/{uuid_of(bobs)}/messages", {"parts": [{"mime_type": "text/plain", "body": "hi"}]}, as_bob)["id"]
    )

    # Channels: one Alice owns (with Bob), one Bob owns that Alice is in, each with a message.
    channels = []
    for owner, name, members in [(as_alice, "fuzz-channel", ["fuzz-bob"]), (as_bob, "fuzz-bobs-channel", ["fuzz-alice"])]:
        channel = call("POST", "/channels", {"name": name, "members": members}, owner)["id"]
        channels.append(channel)
        path = f"/channels/{uuid_of(channel)}/messages"
        messages.append(call("POST", path, {"parts": [{"mime_type": "text/plain", "body": "ahoy"}]}, owner)["id"])

    # An announcement to Alice, from the app's backend.
    call(
        "POST",
        f"/apps/{app_uuid}/announcements",
        {"recipients": ["fuzz-alice"], "sender": {"name": "Fuzz"}, "parts": [{"mime_type": "text/plain", "body": "news"}]},
        as_server,
    )
    announcements = [item["id"] for item in call("GET", "/announcements", headers=as_alice)]

    # Content uploaded by Alice (fuzzed upload and download requests carry generated signatures:
    # only the server can make a valid one).
    payload = b"x" * 3000
    slot = call("POST", "/content", headers={**as_alice, "Upload-Content-Type": "text/plain", "Upload-Content-Length": str(len(payload))})
    upload = urllib.parse.urlsplit(slot["upload_url"])
    call("PUT", f"{upload.path}?{upload.query}", headers={"Content-Type": "text/plain"}, raw=payload)

    # A device certificate from a standard PKCS#10 request.
    csr = subprocess.run(
        ["openssl", "req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", "/dev/null", "-subj", "/CN=fuzz-device"],
        capture_output=True, text=True, check=True,
    ).stdout
    certificate = call("POST", "/certificates", {"csr": csr})["id"]

    # Persons and address books of the names service: Alice's own person, which she claims (so
    # that the owner's routes reach their owner's branch), Bob's, and two the app's backend added;
    # a book of Alice's with a duplicate in it, and one of the backend's.
    persons_path, books_path = "/persons", "/address-books"
    persons = [
        call("POST", persons_path, {"persons": [{"first_name": "Fuzz", "last_name": "Alice", "addresses": [
            {"type": "system", "value": "fuzz-alice"}, {"type": "email", "value": "fuzz-alice@example.com"}]}]}, as_alice)["persons"][0]["id"],
        call("POST", persons_path, {"persons": [{"first_name": "Fuzz", "last_name": "Bob", "addresses": [
            {"type": "system", "value": "fuzz-bob"}, {"type": "phone", "value": "+14155550100"}]}]}, as_bob)["persons"][0]["id"],
    ]
    persons += [person["id"] for person in call("POST", f"/apps/{app_uuid}{persons_path}", {"persons": [
        {"first_name": "Carol", "last_name": "Fuzz", "addresses": [{"type": "system", "value": "fuzz-carol"},
                                                                  {"type": "email", "value": "carol@example.com"}]},
        {"first_name": "Caroline", "last_name": "Fuzz", "birthday": "1990-01-02", "addresses": [{"type": "email", "value": "carol@example.com"}]},
    ]}, as_server)["persons"]]
    call("POST", f"{persons_path}/{uuid_of(persons[0])}/claim", headers=as_alice)
    contact = {"first_name": "Dora", "last_name": "Fuzz", "addresses": [{"type": "email", "value": "dora@example.com"}]}
    alices_book = call("POST", books_path, {"contacts": [contact, contact, {"first_name": "Dorothy", "last_name": "Fuzz"}]}, as_alice)
    books = [alices_book["id"], call("POST", f"/apps/{app_uuid}{books_path}", {"contacts": [contact]}, as_server)["id"]]
    contacts = [item["id"] for item in alices_book["contacts"]]
    addresses = ["email:fuzz-alice@example.com", "system:fuzz-alice", "phone:+14155550100", "email:carol@example.com"]

    # Calls of the VoIP service, both Alice's: one still ringing, one answered by Bob.
    ring = {"callee": "layer:///identities/fuzz-bob", "caller_token": "fuzz-token", "candidates": [
        {"type": "host", "ip": "192.0.2.1", "port": 5000, "transport": "udp"}]}
    calls = [call("POST", "/calls", ring, as_alice)["id"], call("POST", "/calls", ring, as_alice)["id"]]
    call("POST", f"/calls/{uuid_of(calls[1])}/answer", {"device_id": "fuzz-phone", "callee_token": "fuzz-answer"}, as_bob)

    def both_forms(identifiers):
        return [form for identifier in identifiers for form in (uuid_of(identifier), identifier)]

    dictionaries = {
        "app": [app_uuid, app],
        "user": ["fuzz-bob", "fuzz-carol"],
        "blocked": ["fuzz-carol", "layer:///identities/fuzz-carol"],
        "followed": ["fuzz-bob", "layer:///identities/fuzz-carol"],
        "conversation": both_forms(conversations),
        "channel": both_forms(channels),
        "message": both_forms(messages),
        "announcement": both_forms(announcements),
        "content": both_forms([slot["id"]]),
        "provider": both_forms([keys["iss"]]),
        "key": both_forms([keys["kid"]]),
        "certificate": both_forms([certificate]),
        "person": both_forms(persons),
        "book": both_forms(books),
        "call": both_forms(calls),
        "address": addresses,
        # /sessions/{token} ends a session and /admin/apps/{app}/tokens/{token} revokes a Server
        # API token: the spares only.
        "token": [spare_session, uuid_of(spare_token_id), spare_token_id],
    }
    credentials = {
        "layerSession": ("api_key", f'Layer session-token="{alice}"'),
        "serverAPIToken": ("bearer", server),
        "operatorToken": ("bearer", dev["operator_token"]),
    }
    # Request bodies that name real objects: dictionaries only fill parameters, so these become
    # the examples of the body schemas that hold ids (the examples phase builds cases from them).
    body_examples = {
        "NamesRouteRequest": {"address": "system:fuzz-bob", "app_id": app_uuid},
        "NamesConsolidate": {"keep": contacts[0], "merge": contacts[1]},
    }
    for source in documents:
        name = source.rsplit("/", 1)[-1].removesuffix(".yaml")
        with open(source) as file:
            document = yaml.safe_load(file)
        for parameter in document.get("components", {}).get("parameters", {}).values():
            if parameter.get("in") == "path" and parameter["name"] in dictionaries and parameter["name"] != "token":
                parameter["example"] = dictionaries[parameter["name"]][0]
        for schema_name, schema in document.get("components", {}).get("schemas", {}).items():
            if schema_name in body_examples:
                schema["example"] = body_examples[schema_name]
        with open(f"{out_dir}/{name}.yaml", "w") as file:
            yaml.safe_dump(document, file, sort_keys=False, allow_unicode=True)
        write_config(f"{out_dir}/{name}.toml", document, credentials, dictionaries, max_examples, cache)


def toml_string(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


def write_config(path, document, credentials, dictionaries, max_examples, cache):
    schemes = document.get("components", {}).get("securitySchemes", {})
    operations = {
        operation.get("operationId") for item in document["paths"].values() for operation in item.values() if isinstance(operation, dict)
    }
    lines = [
        "# Written by scripts/fuzz-seed.py for one run of scripts/fuzz.",
        f"headers = {{ Accept = {toml_string(ACCEPT)} }}",
        "request-timeout = 10",
        # What `st replay` reads: with the reports, not in the working directory.
        f"cache = {{ directory = {toml_string(cache)} }}",
        "",
        "[generation]",
        f"max-examples = {max_examples}",
        'database = "none"',
        "",
    ]
    for scheme, (kind, value) in credentials.items():
        if scheme in schemes:
            lines += [f"[auth.openapi.{scheme}]", f"{kind} = {toml_string(value)}"]
    lines.append("")
    for name, values in dictionaries.items():
        lines += [f"[dictionaries.{name}]", f"values = [{', '.join(toml_string(value) for value in values)}]"]
    lines += ["", "[parameters]"]
    for name in dictionaries:
        lines.append(f'"path.{name}" = {{ dictionary = "{name}", probability = 0.8 }}')
    # The addresses GET /resolve looks up (address) and knows (known), like the path's.
    for name in ("address", "known"):
        lines.append(f'"query.{name}" = {{ dictionary = "address", probability = 0.8 }}')
    if "streamEvents" in operations:
        # The event stream never ends by itself: read at most one event, for at most two seconds.
        lines += ["", "[[operations]]", 'include-operation-id = "streamEvents"', "request-timeout = 2", "max-stream-events = 1"]
    with open(path, "w") as file:
        file.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
