#!/usr/bin/env python3
"""Copies deploy/nginx/nginx.conf into the `nginx.conf` key of the ConfigMap `layerline-edge` in
deploy/kubernetes/edge.yaml, byte for byte, so that the Kubernetes edge runs the same configuration
as compose and the edge tests. Run it after changing nginx.conf (scripts/check-deploy.sh fails
while the two differ):

    python3 deploy/kubernetes/sync-edge-config.py

Only that block of edge.yaml is rewritten: it runs from the line `  nginx.conf: |` to the first line
after it that is neither empty nor indented deeper than the key. Standard library only.
"""
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCE = ROOT / "deploy" / "nginx" / "nginx.conf"
MANIFEST = ROOT / "deploy" / "kubernetes" / "edge.yaml"
KEY = "  nginx.conf: "
INDENT = " " * 4


def block(text):
    """nginx.conf as the value of a YAML literal block scalar under KEY."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for number, line in enumerate(lines, 1):
        if line != line.rstrip(" \t") or "\t" in line or "\r" in line:
            sys.exit(f"{SOURCE}:{number}: a tab, a carriage return or trailing whitespace cannot be copied as it is")
    if text.endswith("\n\n"):
        sys.exit(f"{SOURCE}: ends with blank lines; remove them")
    # Chomping: `|` keeps the final newline, `|-` is for a file without one.
    chomp = "" if text.endswith("\n") else "-"
    # An explicit indentation when the first line starts with a space.
    indicator = str(len(INDENT)) if lines and lines[0].startswith(" ") else ""
    return [f"{KEY}|{indicator}{chomp}"] + [INDENT + line if line else "" for line in lines]


def main():
    text = SOURCE.read_text(encoding="utf-8")
    manifest = MANIFEST.read_text(encoding="utf-8").split("\n")
    starts = [i for i, line in enumerate(manifest) if line.startswith(KEY + "|")]
    if len(starts) != 1:
        sys.exit(f"{MANIFEST}: expected one line starting with '{KEY}|', found {len(starts)}")
    start = starts[0]
    end = start + 1
    while end < len(manifest) and (manifest[end] == "" or manifest[end].startswith(INDENT)):
        end += 1
    # Blank lines before the next key belong to the manifest, not to the block.
    while end > start + 1 and manifest[end - 1] == "":
        end -= 1
    updated = manifest[:start] + block(text) + manifest[end:]
    if updated == manifest:
        print(f"{MANIFEST.relative_to(ROOT)}: nginx.conf is already the same as {SOURCE.relative_to(ROOT)}")
        return
    MANIFEST.write_text("\n".join(updated), encoding="utf-8")
    print(f"{MANIFEST.relative_to(ROOT)}: nginx.conf copied from {SOURCE.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
