"""python -m deploycheck CHECK [ARGUMENT…] (with scripts/ on the path): runs one check and exits
with its status. scripts/check-deploy.sh runs them."""

import sys

from . import common, compose, dockerfile, kubernetes, nginx_routes


def products(argv):
    print(" ".join(sorted(common.executable_products())))
    return 0


def compose_binary(argv):
    print(common.compose_binary())
    return 0


def required_variables(argv):
    print("\n".join(compose.REQUIRED))
    return 0


CHECKS = {
    "products": products,  # the executable products of Package.swift
    "compose-binary": compose_binary,
    "required-variables": required_variables,  # what compose refuses to run without
    "compose-config": compose.config_main,  # [--without VARIABLE]
    "env-example": compose.env_example_main,
    "compose-wiring": compose.main,  # PRODUCTS
    "dockerfile": dockerfile.main,  # PRODUCTS
    "kubernetes-wiring": kubernetes.main,  # PRODUCTS
    "kubernetes-upstreams": kubernetes.loopback_upstreams_main,  # OUT
    "nginx-routes": nginx_routes.main,  # PRODUCTS
}

if len(sys.argv) < 2 or sys.argv[1] not in CHECKS:
    sys.exit(f"usage: python -m deploycheck {{{','.join(CHECKS)}}} [ARGUMENT…]")
sys.exit(CHECKS[sys.argv[1]](sys.argv[2:]))
