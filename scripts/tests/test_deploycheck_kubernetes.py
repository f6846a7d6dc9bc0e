"""deploycheck.kubernetes: the wiring of the manifests. The real manifests pass; each change
below, one mistake an operator or a new service could make, is reported."""

import copy
import pathlib
import sys
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from deploycheck import common, kubernetes, kubernetes_objects, kubernetes_turn  # noqa: E402


class KubernetesTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.objects = kubernetes_objects.load()
        cls.products = common.executable_products()
        cls.nginx_conf = common.read("deploy/nginx/nginx.conf")
        cls.compose_coturn = kubernetes_turn.compose_coturn_command()
        cls.readme = common.read("deploy/kubernetes/README.md")

    def setUp(self):
        self.changed = copy.deepcopy(self.objects)

    def find(self, kind, name):
        [found] = [o for o in self.changed if o["kind"] == kind and o["metadata"]["name"] == name]
        return found

    def container(self, name):
        return kubernetes_objects.container_of(self.find("Deployment", name))

    def problems(self, nginx_conf=None, products=None):
        return kubernetes.problems(self.changed, self.products if products is None else products,
                                   nginx_conf or self.nginx_conf, self.compose_coturn, self.readme)[0]

    def test_the_manifests_are_wired(self):
        found, summary = kubernetes.problems(self.objects, self.products, self.nginx_conf, self.compose_coturn,
                                             self.readme)
        self.assertEqual(found, [])
        self.assertIn("of 85; NetworkPolicies: 5", summary)

    def test_a_missing_secret_is_reported(self):
        env = self.container("layer-sync")["env"]
        env[:] = [v for v in env if v["name"] != "LAYER_INTERNAL_TOKEN_AUTH_FILE"]
        self.assertEqual(self.problems(), ["layer-sync: LAYER_INTERNAL_TOKEN_AUTH does not come from the key of that "
                                           "name of the Secret layerline-secrets"])

    def test_a_token_of_a_service_that_does_not_call_is_reported(self):
        self.container("layer-names")["env"].append({"name": "LAYER_INTERNAL_TOKEN_AUTH", "valueFrom": {
            "secretKeyRef": {"name": "layerline-secrets", "key": "LAYER_INTERNAL_TOKEN_AUTH"}}})
        self.assertEqual(self.problems(), ["layer-names: gets internal tokens of services that do not call it: "
                                           "['LAYER_INTERNAL_TOKEN_AUTH']"])

    def test_a_readiness_probe_on_the_peers_is_reported(self):
        self.container("layer-voip")["readinessProbe"]["httpGet"]["path"] = "/health/ready"
        self.assertEqual(self.problems(),
                         ["layer-voip: readinessProbe is not GET /health/ready?peers=false on the http port"])

    def test_a_single_replica_and_no_pause_are_reported(self):
        self.find("Deployment", "layer-auth")["spec"]["replicas"] = 1
        del self.container("layer-auth")["lifecycle"]
        found = self.problems()
        self.assertIn("layer-auth: fewer than 2 replicas", found)
        self.assertIn("layer-auth: no preStop pause of 3 s or more (it has 0 s): requests would still arrive after "
                      "SIGTERM", found)

    def test_connections_over_the_budget_are_reported(self):
        self.find("Deployment", "layer-sync")["spec"]["replicas"] = 5
        found = self.problems()
        self.assertEqual(len(found), 1)
        self.assertTrue(found[0].startswith("PostgreSQL connections: ") and "over the budget of 85" in found[0], found)

    def test_a_wrong_service_url_is_reported(self):
        self.find("ConfigMap", "layer-sync-config")["data"]["LAYER_AUTH_URL"] = "http://layer-auth.layerline.svc:9999"
        self.assertEqual(self.problems(), ["layer-sync: LAYER_AUTH_URL 'http://layer-auth.layerline.svc:9999' is not "
                                           "the layer-auth Service on port 8081"])

    def test_a_service_executable_without_a_deployment_is_reported(self):
        found = self.problems(products=self.products | {"layer-extra"})
        self.assertEqual(found, ["layer-extra: 0 Deployments in layerline run it, not one"])

    def test_an_edge_config_out_of_date_is_reported(self):
        found = self.problems(nginx_conf=self.nginx_conf + "\n# changed\n")
        self.assertEqual(found, ["layerline-edge: the nginx.conf of ConfigMap layerline-edge (edge.yaml) differs from "
                                 "deploy/nginx/nginx.conf: run python3 deploy/kubernetes/sync-edge-config.py"])

    def test_the_device_ca_key_given_to_the_edge_is_reported(self):
        for volume in self.find("Deployment", "layerline-edge")["spec"]["template"]["spec"]["volumes"]:
            for source in [volume] + (volume.get("projected") or {}).get("sources", []):
                if (source.get("secret") or {}).get("items"):
                    source["secret"]["items"].append({"key": "device-ca.key", "path": "device-ca.key"})
        self.assertIn("layerline-edge: it mounts more of layerline-device-ca than device-ca.pem (the CA's key "
                      "belongs to auth alone)", self.problems())

    def test_no_default_deny_is_reported(self):
        self.changed.remove(self.find("NetworkPolicy", "default-deny"))
        found = self.problems()
        self.assertIn("no default-deny NetworkPolicy for ingress in namespace layerline", found)
        self.assertIn("NetworkPolicy: a pod of namespace layerline that no policy names is reachable "
                      "(no default deny)", found)

    def test_a_service_reachable_from_anyone_is_reported(self):
        policy = self.find("NetworkPolicy", "layerline-services")
        policy["spec"]["ingress"].append({})  # from anyone, on any port
        found = self.problems()
        self.assertIn("layer-auth: NetworkPolicy: anyone outside reaches its http port", found)
        self.assertIn("layer-sync: NetworkPolicy: a pod of another namespace reaches its http port", found)

    def test_coturn_differing_from_compose_is_reported(self):
        coturn = self.container("coturn")
        arguments = coturn["args"] if "args" in coturn else coturn["command"]
        arguments.remove("--denied-peer-ip=10.0.0.0-10.255.255.255")
        found = self.problems()
        self.assertIn("coturn: may relay to private 10/8 (10.0.0.1, 10.255.255.254): no denied-peer-ip covers it",
                      found)
        self.assertIn("coturn: its arguments differ from compose's coturn (besides --external-ip): "
                      "['--denied-peer-ip=10.0.0.0-10.255.255.255']", found)

    def test_a_stun_port_behind_a_cluster_policy_is_reported(self):
        self.find("Service", "layer-voip-stun")["spec"]["externalTrafficPolicy"] = "Cluster"
        found = self.problems()
        self.assertIn("layer-voip: no LoadBalancer Service with externalTrafficPolicy Local carries its STUN port "
                      "3479/UDP (with Cluster, clients would be told a node's address)", found)
        self.assertEqual(len(found), 2, found)  # and its URIs name no port of such a Service

    def test_a_checkov_skip_without_reason_is_reported(self):
        self.find("Deployment", "layer-sync")["metadata"]["annotations"]["checkov.io/skip1"] = "CKV_K8S_43=why"
        self.assertEqual(self.problems(), ["Deployment layer-sync: checkov.io/skip1 is not CKV_K8S_<n>=<a reason of 20 "
                                           "characters or more, without '='>"])


if __name__ == "__main__":
    unittest.main()
