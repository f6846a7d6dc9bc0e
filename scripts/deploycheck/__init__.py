"""The checks of scripts/check-deploy.sh that read the deployment files themselves, one module
each: dockerfile, compose, kubernetes (with kubernetes_objects, _services, _edge and _turn),
nginx_routes; network_policies and coturn serve the compose and Kubernetes checks, and common
holds what they all share. `python -m deploycheck CHECK …` (__main__.py) runs one; their tests
are in scripts/tests/."""
