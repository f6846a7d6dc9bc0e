"""NetworkPolicies, evaluated: who reaches whom on which port. A connection needs the source's
egress and the destination's ingress; a pod that no policy of a direction selects is open in
that direction, and an address outside the cluster has no policy at all."""

import ipaddress


def selected(selector, labels):
    """Whether a label selector (matchLabels, matchExpressions) selects these labels."""
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions") or []:
        key, operator, values = expression["key"], expression["operator"], expression.get("values") or []
        if (operator == "In" and labels.get(key) not in values) or (operator == "NotIn" and labels.get(key) in values) \
                or (operator == "Exists" and key not in labels) or (operator == "DoesNotExist" and key in labels):
            return False
    return True


def peer_matches(peer, other, namespace):
    """Whether a rule's peer (of a policy of `namespace`) names the endpoint `other`."""
    if "ipBlock" in peer:
        address = ipaddress.ip_address(other["address"])
        return address in ipaddress.ip_network(peer["ipBlock"]["cidr"]) and \
            not any(address in ipaddress.ip_network(e) for e in peer["ipBlock"].get("except", []))
    if other["namespace"] is None:
        return False
    if "namespaceSelector" in peer:
        if not selected(peer["namespaceSelector"], other["namespace_labels"]):
            return False
    elif other["namespace"] != namespace:
        return False
    return selected(peer.get("podSelector") or {}, other["labels"])


def port_matches(rule_ports, port):
    """Whether a rule's ports admit `port`, (name, number, protocol)."""
    name, number, protocol = port
    for rule_port in rule_ports or [{}]:
        if rule_port.get("protocol", "TCP") != protocol and rule_port:
            continue
        value = rule_port.get("port")
        if value is None or value == name \
                or (isinstance(value, int) and value <= number <= rule_port.get("endPort", value)):
            return True
    return False


class Network:
    """The NetworkPolicies of the manifests, and endpoints to ask them about: pods modelled from
    Deployments, and others that stand for what an attacker or a neighbour could be."""

    def __init__(self, policies, namespaces):
        self.policies, self.namespaces = policies, namespaces

    def endpoint(self, namespace, labels, address, ports=()):
        """namespace None: outside the cluster. ports: (name, number, protocol) it serves."""
        namespace_labels = dict(((self.namespaces.get(namespace) or {}).get("metadata", {}).get("labels") or {}))
        if namespace:
            namespace_labels["kubernetes.io/metadata.name"] = namespace
        return {"namespace": namespace, "labels": labels, "namespace_labels": namespace_labels, "address": address,
                "ports": list(ports)}

    def pod(self, deployment, number):
        """A pod of the Deployment, at an address of its own (by `number`)."""
        pod = deployment["spec"]["template"]
        ports = [(p.get("name"), p["containerPort"], p.get("protocol", "TCP"))
                 for c in pod["spec"]["containers"] for p in c.get("ports", [])]
        return self.endpoint(deployment["metadata"]["namespace"], pod["metadata"]["labels"], f"10.244.{number}.10",
                             ports)

    def admitted(self, direction, subject, other, port):
        """Whether the policies of `subject` let `other` through in that direction (Ingress, Egress)."""
        if subject["namespace"] is None:
            return True  # outside the cluster: no NetworkPolicy
        def types(spec):  # without policyTypes: Ingress, and Egress if it has egress rules
            return spec.get("policyTypes") or ["Ingress"] + (["Egress"] if "egress" in spec else [])
        selecting = [p for p in self.policies if p["metadata"].get("namespace") == subject["namespace"]
                     and selected(p["spec"].get("podSelector") or {}, subject["labels"])
                     and direction in types(p["spec"])]
        if not selecting:
            return True
        rules, peers = ("ingress", "from") if direction == "Ingress" else ("egress", "to")
        return any(port_matches(rule.get("ports"), port)
                   and (not rule.get(peers)
                        or any(peer_matches(peer, other, p["metadata"]["namespace"]) for peer in rule[peers]))
                   for p in selecting for rule in p["spec"].get(rules) or [])

    def reaches(self, source, destination, port_name, number=None, protocol="TCP"):
        """Whether `source` reaches the destination's port of that name (or number) and protocol."""
        port = next(((n, p, proto) for n, p, proto in destination["ports"] if n == port_name and proto == protocol),
                    (port_name, number, protocol))
        return self.admitted("Egress", source, destination, port) \
            and self.admitted("Ingress", destination, source, port)

    def default_deny(self, namespace):
        """Whether a policy of the namespace selects all its pods for ingress."""
        return any(p["metadata"].get("namespace") == namespace and not (p["spec"].get("podSelector") or {})
                   and "Ingress" in (p["spec"].get("policyTypes") or []) for p in self.policies)
