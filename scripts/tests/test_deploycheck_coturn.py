"""deploycheck.coturn: coturn's command line as its entrypoint expands it, and what it must say."""

import pathlib
import sys
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import yaml  # noqa: E402

from deploycheck import common, coturn  # noqa: E402


def compose_arguments():
    """compose's coturn command, `$$` made `$` and its one interpolation given a value."""
    command = yaml.safe_load(common.read("docker-compose.yml"))["services"]["coturn"]["command"]
    return [a.replace("$$", "$").replace("${LAYER_TURN_EXTERNAL_IP:-127.0.0.1}", "127.0.0.1") for a in command]


class OptionsTests(unittest.TestCase):
    def test_options_and_flags(self):
        parsed = coturn.options(["-c", "/etc/secret.conf", "--realm=example", "--no-cli", "--denied-peer-ip=::1",
                                 "--denied-peer-ip=10.0.0.0-10.255.255.255", "stray"])
        self.assertEqual(parsed, {"c": ["/etc/secret.conf"], "realm": ["example"], "no-cli": [None],
                                  "denied-peer-ip": ["::1", "10.0.0.0-10.255.255.255"]})
        self.assertEqual(coturn.options(["-c"]), {"c": [None]})

    def test_entrypoint_expansion(self):
        # The container's environment only: no command runs, an unset variable is empty.
        self.assertEqual(coturn.entrypoint_expand(["--external-ip=${ADDRESS}", "--realm=$(hostname)x", "--x=$UNSET"],
                                                  {"ADDRESS": "203.0.113.1"}),
                         ["--external-ip=203.0.113.1", "--realm=x", "--x="])

    def test_denied_ranges(self):
        ranges, problems = coturn.denied_ranges(["10.0.0.0-10.255.255.255", "::1", "10.0.0.9-10.0.0.1", "10.0.0.0/8",
                                                 "10.0.0.1-::2"])
        self.assertEqual(len(ranges), 2)
        self.assertEqual(len(problems), 3)
        self.assertTrue(coturn.is_denied("10.1.2.3", ranges))
        self.assertFalse(coturn.is_denied("11.0.0.1", ranges))
        self.assertFalse(coturn.is_denied("::2", ranges))

    def test_pinned(self):
        self.assertTrue(coturn.pinned("coturn/coturn:4.17.0-r0-alpine"))
        self.assertTrue(coturn.pinned("docker.io/coturn/coturn:4.6.3"))
        for image in ("coturn/coturn", "coturn/coturn:latest", "coturn/coturn:4", "coturn/coturn:4.6",
                      "other/coturn:4.6.3"):
            self.assertFalse(coturn.pinned(image), image)


class ProblemsTests(unittest.TestCase):
    def problems(self, arguments, extra_denied=()):
        return coturn.problems(coturn.options(arguments), extra_denied)

    def test_compose_arguments_pass(self):
        self.assertEqual(self.problems(compose_arguments(), [("the compose network", "172.28.0.0/24")]), [])
        self.assertEqual(list(coturn.relay_ports(coturn.options(compose_arguments()))), list(range(49160, 49201)))

    def test_an_open_private_range_is_reported(self):
        arguments = [a for a in compose_arguments() if a != "--denied-peer-ip=10.0.0.0-10.255.255.255"]
        self.assertEqual(self.problems(arguments),
                         ["may relay to private 10/8 (10.0.0.1, 10.255.255.254): no denied-peer-ip covers it"])

    def test_an_extra_network_must_be_denied(self):
        self.assertEqual(self.problems(compose_arguments(), [("a network", "203.0.113.0/24")]),
                         ["may relay to a network (203.0.113.0/24): no denied-peer-ip covers it"])

    def test_the_secret_on_the_command_line_and_forbidden_flags(self):
        arguments = [a for a in compose_arguments() if a not in ("-c", "/etc/coturn/secret/secret.conf")]
        found = self.problems(arguments + ["--static-auth-secret=s", "--allow-loopback-peers"])
        self.assertIn("--static-auth-secret is on its command line (give it in its settings file, -c)", found)
        self.assertIn("no settings file (-c) to read its static-auth-secret from", found)
        self.assertIn("--allow-loopback-peers is given", found)

    def test_missing_flags_and_ports(self):
        arguments = [a for a in compose_arguments()
                     if a not in ("--use-auth-secret", "--realm=layerline")
                     and not a.startswith(("--max-port", "--listening"))]
        found = self.problems(arguments)
        for problem in ("no --use-auth-secret", "no --realm", "no numeric --min-port and --max-port",
                        "no numeric --listening-port"):
            self.assertIn(problem, found)

    def test_a_wide_relay_range_is_reported(self):
        arguments = [a.replace("--max-port=49200", "--max-port=65535") for a in compose_arguments()]
        self.assertEqual(self.problems(arguments), ["relay ports 49160-65535 are not a small range above 1024"])


if __name__ == "__main__":
    unittest.main()
