"""deploycheck.network_policies: who reaches whom under a set of NetworkPolicies."""

import pathlib
import sys
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from deploycheck.network_policies import Network, port_matches, selected  # noqa: E402


def policy(name, spec, namespace="app"):
    return {"kind": "NetworkPolicy", "metadata": {"name": name, "namespace": namespace}, "spec": spec}


DEFAULT_DENY = policy("default-deny", {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]})
WEB_FROM_MONITORING = policy("web", {
    "podSelector": {"matchLabels": {"role": "web"}},
    "policyTypes": ["Ingress"],
    "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {"team": "monitoring"}}}],
                 "ports": [{"port": "http"}]}],
})
CLIENT_TO_WEB = policy("client", {
    "podSelector": {"matchLabels": {"role": "client"}},
    "policyTypes": ["Egress"],
    "egress": [{"to": [{"podSelector": {"matchLabels": {"role": "web"}}}], "ports": [{"port": 8000, "endPort": 8100}]}],
})
NAMESPACES = {"monitoring": {"metadata": {"name": "monitoring", "labels": {"team": "monitoring"}}}}


class NetworkTests(unittest.TestCase):
    def endpoints(self, network):
        web = network.endpoint("app", {"role": "web"}, "10.0.0.1", [("http", 8080, "TCP")])
        client = network.endpoint("app", {"role": "client"}, "10.0.0.2")
        monitor = network.endpoint("monitoring", {}, "10.0.0.3")
        outsider = network.endpoint(None, {}, "203.0.113.1")
        return web, client, monitor, outsider

    def test_without_policies_everything_is_open(self):
        network = Network([], NAMESPACES)
        web, client, monitor, outsider = self.endpoints(network)
        self.assertTrue(network.reaches(outsider, web, "http"))
        self.assertTrue(network.reaches(client, web, "http"))
        self.assertFalse(network.default_deny("app"))

    def test_default_deny_closes_both_directions(self):
        network = Network([DEFAULT_DENY], NAMESPACES)
        web, client, monitor, outsider = self.endpoints(network)
        self.assertTrue(network.default_deny("app"))
        self.assertFalse(network.reaches(outsider, web, "http"))
        self.assertFalse(network.reaches(client, web, "http"))
        self.assertFalse(network.reaches(web, outsider, "http", 443))
        self.assertTrue(network.reaches(monitor, outsider, "https", 443))  # its namespace has no policy

    def test_ingress_needs_the_peer_and_the_port_and_egress_its_own_rule(self):
        network = Network([DEFAULT_DENY, WEB_FROM_MONITORING, CLIENT_TO_WEB], NAMESPACES)
        web, client, monitor, outsider = self.endpoints(network)
        self.assertTrue(network.reaches(monitor, web, "http"))
        self.assertFalse(network.reaches(monitor, web, "metrics", 9090))
        self.assertFalse(network.reaches(outsider, web, "http"))
        # The client's egress allows 8000-8100, but the web pod's ingress admits the monitoring namespace only.
        self.assertFalse(network.reaches(client, web, "http"))
        self.assertTrue(network.admitted("Egress", client, web, ("http", 8080, "TCP")))
        self.assertFalse(network.admitted("Egress", client, web, ("other", 9000, "TCP")))

    def test_selectors_and_ports(self):
        labels = {"app": "a", "tier": "web"}
        self.assertTrue(selected({}, labels))
        def expression(operator, *values):
            return {"matchExpressions": [{"key": "tier", "operator": operator, "values": list(values)}]}
        self.assertTrue(selected(expression("In", "web", "db"), labels))
        self.assertFalse(selected(expression("NotIn", "web"), labels))
        self.assertFalse(selected({"matchExpressions": [{"key": "app", "operator": "DoesNotExist"}]}, labels))
        self.assertFalse(selected({"matchLabels": {"app": "b"}}, labels))
        self.assertTrue(port_matches(None, ("dns", 53, "UDP")))
        self.assertTrue(port_matches([{"port": 53, "protocol": "UDP"}], ("dns", 53, "UDP")))
        self.assertFalse(port_matches([{"port": 53}], ("dns", 53, "UDP")))  # TCP unless said
        self.assertTrue(port_matches([{"port": "dns", "protocol": "UDP"}], ("dns", 53, "UDP")))

    def test_ip_blocks_with_exceptions(self):
        allow = policy("from-internet", {"podSelector": {}, "policyTypes": ["Ingress"], "ingress": [
            {"from": [{"ipBlock": {"cidr": "0.0.0.0/0", "except": ["10.0.0.0/8"]}}]}]})
        network = Network([allow], NAMESPACES)
        web, client, monitor, outsider = self.endpoints(network)
        self.assertTrue(network.reaches(outsider, web, "http"))
        self.assertFalse(network.reaches(monitor, web, "http"))  # 10.0.0.3 is excepted


if __name__ == "__main__":
    unittest.main()
