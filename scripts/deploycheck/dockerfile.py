"""deploy/Dockerfile against Package.swift: every folder Package.swift gives as a target path is
copied into the build stage (or the manifest cannot load), and the one image builds every
executable product (PRODUCTS), so that none is missing from it."""

import re

from .common import read, report


def problems(package, dockerfile, products):
    """What is wrong, given the text of Package.swift and of the Dockerfile, and the executable products."""
    folders = {path.split("/")[0] for path in re.findall(r'path:\s*"([^"]+)"', package)}
    copied = set(re.findall(r'^COPY\s+([^\s/]+)/\s+\1/\s*$', dockerfile, re.M))
    found = [f"Package.swift names {folder}/, which the Dockerfile does not copy"
             for folder in sorted(folders - copied)]
    if not products:
        found.append("Package.swift has no executable products")
    declared = re.findall(r'^ARG PRODUCTS="([^"]*)"', dockerfile, re.M)
    if len(declared) != 1:
        found.append("no single ARG PRODUCTS=\"…\" in the build stage")
    elif set(declared[0].split()) != set(products):
        found.append(f"PRODUCTS {sorted(declared[0].split())} is not the executable products of Package.swift "
                     f"{sorted(products)}")
    if '--product "$product"' not in dockerfile:
        found.append("the build stage does not build each of PRODUCTS")
    if "EXEC_NAME" in dockerfile:
        found.append("EXEC_NAME is gone: one image holds every executable")
    return found, f"folders copied: {sorted(folders)}; products: {sorted(products)}"


def main(argv):
    """argv: the executable products, separated by spaces."""
    return report(*problems(read("Package.swift"), read("deploy/Dockerfile"), set(argv[0].split())))
