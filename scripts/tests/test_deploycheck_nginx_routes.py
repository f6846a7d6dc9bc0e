"""deploycheck.nginx_routes: nginx's choice of location, replayed; the real edge passes and a
wrong one is caught."""

import pathlib
import sys
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import yaml  # noqa: E402

from deploycheck import common, nginx_routes  # noqa: E402

SAMPLE = """
http {
    map $http_upgrade $connection_upgrade { default upgrade; '' close; }
    server {
        listen 80;
        location / { return 301 https://$host$request_uri; }
    }
    server {
        listen 443 ssl;  # a comment with a { brace
        proxy_set_header Host $host;
        location = /exact { proxy_pass http://exact; }
        location /prefix { proxy_pass http://prefix; }
        location /prefix/longer { proxy_pass http://longer; }
        location ^~ /stop { proxy_pass http://stop; }
        location ~ ^/(prefix|stop)/regex { proxy_pass http://regex; }
        location ~* \\.PNG$ { return 404 '{"id":"not_found"}'; }
    }
}
"""


class RouteTests(unittest.TestCase):
    def setUp(self):
        self.server = nginx_routes.TLSServer(SAMPLE)

    def assertRoutes(self, path, target):
        self.assertEqual(self.server.route(path)[0], target, path)

    def test_nginx_order_of_locations(self):
        self.assertRoutes("/exact", "exact")
        self.assertRoutes("/exact/more", "none")  # = matches only itself
        self.assertRoutes("/prefix/a", "prefix")
        self.assertRoutes("/prefix/longer/a", "longer")  # the longest prefix
        self.assertRoutes("/prefix/regex", "regex")  # a regular expression beats a plain prefix
        self.assertRoutes("/stop/regex", "stop")  # but not ^~
        self.assertRoutes("/image.png", "return 404")  # ~* ignores case; a brace in quotes is no block
        self.assertRoutes("/elsewhere", "none")

    def test_paths_are_normalised_first(self):
        self.assertRoutes("/stop/../prefix/x", "prefix")
        self.assertRoutes("/%70refix/x", "prefix")
        self.assertRoutes("//prefix", "prefix")
        self.assertRoutes("/prefix?x=/stop", "prefix")

    def test_only_the_tls_server_counts(self):
        self.assertEqual({target for _, _, target, _ in self.server.locations},
                         {"exact", "prefix", "longer", "stop", "regex", "return 404"})
        self.assertEqual(self.server.server_headers, {"Host"})

    def test_two_tls_servers_are_refused(self):
        with self.assertRaises(SystemExit):
            nginx_routes.TLSServer(SAMPLE + "server { listen 443; }")

    def test_nginx_seconds(self):
        self.assertEqual([nginx_routes.nginx_seconds(t) for t in ("30", "30s", "10m", "1h", "500ms", "1d")],
                         [30, 30, 600, 3600, 0.5, None])


class EdgeTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.conf = common.read("deploy/nginx/nginx.conf")
        cls.upstreams = common.read("deploy/nginx/upstreams.conf")
        cls.compose = yaml.safe_load(common.read("docker-compose.yml"))["services"]
        cls.products = common.executable_products()

    def problems(self, conf=None, upstreams=None, products=None):
        found, _ = nginx_routes.problems(conf or self.conf, self.compose, upstreams or self.upstreams,
                                         products or self.products)
        return found

    def test_the_edge_routes_as_intended(self):
        self.assertEqual(self.problems(), [])

    def test_a_route_sent_elsewhere_is_caught(self):
        conf = self.conf.replace("location ~ ^/(calls|turn-credentials)(/|$)", "location ~ ^/(calls)(/|$)")
        self.assertIn("/turn-credentials goes to return 404, not layer_voip", self.problems(conf))

    def test_a_catch_all_to_a_service_is_caught(self):
        catch_all = "location / {\n            return 404;"
        self.assertIn(catch_all, self.conf)
        found = self.problems(self.conf.replace(catch_all, "location / {\n            proxy_pass http://layer_auth;"))
        self.assertIn("/metrics goes to layer_auth, not return 404", found)
        self.assertIn("/health/ready goes to layer_auth, not return 404", found)

    def test_a_push_route_that_times_out_is_caught(self):
        conf = self.conf.replace("proxy_read_timeout 1h;", "proxy_read_timeout 5m;")
        found = self.problems(conf)
        self.assertIn("/websocket: proxy_read_timeout is under 10 minutes", found)
        self.assertIn("/events: proxy_read_timeout is under 10 minutes", found)

    def test_an_upstream_on_the_wrong_port_is_caught(self):
        upstreams = self.upstreams.replace("server names:8083", "server names:8093")
        self.assertIn("upstream layer_names points at names:8093, but compose's names listens on 8083",
                      self.problems(upstreams=upstreams))

    def test_a_service_without_upstream_or_route_is_caught(self):
        found = self.problems(products=self.products | {"layer-extra"})
        self.assertIn("layer-extra: no upstream layer_extra in deploy/nginx/upstreams.conf", found)
        self.assertIn("layer-extra: no location of nginx.conf routes to layer_extra", found)


if __name__ == "__main__":
    unittest.main()
