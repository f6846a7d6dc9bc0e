"""deploycheck.dockerfile: the Dockerfile copies every folder of Package.swift and builds every
executable product."""

import pathlib
import sys
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from deploycheck import common, dockerfile  # noqa: E402


class DockerfileTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.package = common.read("Package.swift")
        cls.dockerfile = common.read("deploy/Dockerfile")
        cls.products = common.executable_products()

    def problems(self, package=None, text=None, products=None):
        found, _ = dockerfile.problems(package or self.package, text or self.dockerfile,
                                       self.products if products is None else products)
        return found

    def test_the_dockerfile_matches_the_package(self):
        self.assertEqual(self.problems(), [])

    def test_a_folder_not_copied_is_reported(self):
        self.assertEqual(self.problems(text=self.dockerfile.replace("COPY Benchmarks/ Benchmarks/\n", "")),
                         ["Package.swift names Benchmarks/, which the Dockerfile does not copy"])
        package = self.package + '\n// .target(name: "X", path: "Extra/Sources")\n'
        self.assertEqual(self.problems(package=package),
                         ["Package.swift names Extra/, which the Dockerfile does not copy"])

    def test_an_executable_left_out_of_the_image_is_reported(self):
        found = self.problems(products=self.products | {"layer-extra"})
        self.assertEqual(len(found), 1)
        self.assertTrue(found[0].startswith("PRODUCTS ['layer', "), found)

    def test_no_products_and_no_build_loop_are_reported(self):
        self.assertIn("Package.swift has no executable products", self.problems(products=set()))
        text = self.dockerfile.replace('--product "$product"', '--product layer')
        self.assertEqual(self.problems(text=text), ["the build stage does not build each of PRODUCTS"])

    def test_products_of_a_manifest(self):
        manifest = {"products": [{"name": "a", "type": {"executable": None}},
                                 {"name": "b", "type": {"library": ["automatic"]}}]}
        self.assertEqual(common.products_of(manifest), {"a"})


if __name__ == "__main__":
    unittest.main()
