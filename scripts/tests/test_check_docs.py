"""Tests of scripts/check-docs.py on small pages and checkouts made here (no layer dev, no network).

    python3 -m unittest discover -s scripts/tests
"""

import importlib.util
import stat
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "check-docs.py"
spec = importlib.util.spec_from_file_location("check_docs", SCRIPT)
check_docs = importlib.util.module_from_spec(spec)
sys.modules["check_docs"] = check_docs
spec.loader.exec_module(check_docs)


def checkout(files: dict[str, str]) -> Path:
    """A folder holding `files` (path → text)."""
    root = Path(tempfile.mkdtemp(prefix="check-docs-test-"))
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


class SlugTests(unittest.TestCase):
    def test_github_slugs(self):
        self.assertEqual(check_docs.slug("The changelog and `POST /sync`"), "the-changelog-and-post-sync")
        self.assertEqual(check_docs.slug("Persons, resolution and address books with curl"),
                         "persons-resolution-and-address-books-with-curl")
        self.assertEqual(check_docs.slug("A TURN server in `layer dev`"), "a-turn-server-in-layer-dev")
        self.assertEqual(check_docs.slug("`received_at`"), "received_at")
        self.assertEqual(check_docs.slug("Notifications and badges: no APNs or FCM"),
                         "notifications-and-badges-no-apns-or-fcm")
        self.assertEqual(check_docs.slug("Über café"), "über-café")
        self.assertEqual(check_docs.slug("Two  spaces"), "two--spaces")
        self.assertEqual(check_docs.slug("See [the API](api.md)"), "see-the-api")

    def test_repeated_headings_are_numbered(self):
        page = "# Setup\n\n## Setup\n\ntext\n\n### Setup\n\n## Other\n"
        self.assertEqual(check_docs.anchors(page), {"setup", "setup-1", "setup-2", "other"})

    def test_headings_in_code_are_not_anchors_and_explicit_anchors_are(self):
        page = '# Page\n\n```sh\n# not a heading\n```\n\n| <a id="invalid_request"></a>`x` |\n'
        self.assertEqual(check_docs.anchors(page), {"page", "invalid_request"})


class LinkTests(unittest.TestCase):
    def setUp(self):
        self.root = checkout({
            "README.md": "# Top\n\nSee [the guide](docs/guide.md#the-part) and [here](#top).\n",
            "docs/guide.md": "# Guide\n\n## The part\n\n## The part\n",
            "docs/other.md": "# Other\n",
            "scripts/x.sh": "echo\n",
        })
        self.repo = check_docs.Repository(self.root)

    def failures(self, source: str, text: str) -> list[str]:
        page = check_docs.Page(source, textwrap.dedent(text))
        return [str(f) for f in check_docs.check_links(self.repo, page)]

    def test_a_good_link_passes(self):
        self.assertEqual(self.failures("README.md", (self.root / "README.md").read_text()), [])
        self.assertEqual(self.failures("docs/other.md", "[g](guide.md) [p](guide.md#the-part-1) [s](../scripts/x.sh)\n"), [])

    def test_a_dead_link_fails_with_its_line(self):
        found = self.failures("docs/other.md", "# Other\n\ntext\n[gone](missing.md)\n")
        self.assertEqual(len(found), 1)
        self.assertTrue(found[0].startswith("docs/other.md:4: dead link: missing.md"), found)

    def test_a_dead_anchor_fails(self):
        found = self.failures("docs/other.md", "# Other\n\n[p](guide.md#the-part-2) [q](#nowhere) [r](#other)\n")
        self.assertEqual(len(found), 2, found)
        self.assertIn("#nowhere (no heading #nowhere in docs/other.md)", found[0])
        self.assertIn("no heading #the-part-2 in docs/guide.md", found[1])

    def test_links_in_code_are_not_links_and_text_may_wrap(self):
        text = "`[a](missing.md)`\n\n```md\n[b](missing.md)\n```\n\n[a link that\nwraps](missing.md)\n"
        found = self.failures("docs/other.md", text)
        self.assertEqual(len(found), 1, found)
        self.assertTrue(found[0].startswith("docs/other.md:8:"), found)

    def test_web_links_are_skipped_and_this_repository_on_github_is_checked(self):
        github = check_docs.GITHUB_BLOB  # not spelled out: the checker reads this file's urls too
        text = (f"[w](https://example.com/nothing) [m](mailto:a@b.c) "
                f"[g]({github}docs/guide.md#the-part) [d]({github}docs/guide.md#gone)\n")
        found = self.failures("README.md", text)
        self.assertEqual(len(found), 1, found)
        self.assertIn("#gone", found[0])

    def test_reference_links_are_checked(self):
        self.assertEqual(len(self.failures("README.md", "[x][y]\n\n[y]: docs/nothing.md\n")), 1)

    def test_code_spans_naming_missing_paths_fail(self):
        page = check_docs.Page("README.md", "`scripts/x.sh` and `scripts/gone.sh` and `scripts/<name>`\n")
        found = [str(f) for f in check_docs.check_paths(self.repo, page)]
        self.assertEqual(found, ["README.md:1: no such path: scripts/gone.sh"])


class BlockTests(unittest.TestCase):
    def test_markers_and_misplaced_markers(self):
        text = ("<!-- check-docs: run -->\n```sh\necho a\n```\n\n<!-- check-docs: run after README.md -->\n"
                "```sh\necho b\n```\n\n<!-- check-docs: run -->\nnot a fence\n<!-- check-docs: walk -->\n")
        blocks, failures = check_docs.parse_blocks("docs/a.md", text)
        self.assertEqual([(b.line, b.run, b.after) for b in blocks], [(3, True, None), (8, True, "README.md")])
        self.assertEqual([f.line for f in failures], [11, 13])

    def test_pages_run_after_the_pages_they_go_on_from(self):
        pages = {}
        for name, text in {
            "README.md": "<!-- check-docs: run -->\n```sh\necho 1\n```\n",
            "docs/b.md": "<!-- check-docs: run after docs/c.md -->\n```sh\necho 3\n```\n",
            "docs/c.md": "<!-- check-docs: run after README.md -->\n```sh\necho 2\n```\n",
            "docs/d.md": "<!-- check-docs: run after docs/none.md -->\n```sh\necho 4\n```\n",
        }.items():
            page = check_docs.Page(name, text)
            page.blocks, _ = check_docs.parse_blocks(name, text)
            pages[name] = page
        ordered, failures = check_docs.order_blocks(pages)
        self.assertEqual([b.lines[0] for b in ordered], ["echo 1", "echo 2", "echo 3", "echo 4"])
        self.assertEqual([str(f) for f in failures], ["docs/d.md:1: runs after docs/none.md, which has no run block"])


class ExpectationTests(unittest.TestCase):
    def test_status_and_pieces(self):
        self.assertEqual(check_docs.parse_expectation(" 204"), (204, []))
        self.assertEqual(check_docs.parse_expectation('201 {"a":1,…"b":2}'), (201, ['{"a":1,', '"b":2}']))
        self.assertEqual(check_docs.parse_expectation("HTTP/1.1 401…nonce"), (None, ["HTTP/1.1 401", "nonce"]))

    def test_pieces_match_in_order(self):
        self.assertTrue(check_docs.matches('{"a":1,"x":0,"b":2}', ['{"a":1,', '"b":2}']))
        self.assertFalse(check_docs.matches('{"b":2,"a":1,}', ['{"a":1,', '"b":2}']))
        self.assertTrue(check_docs.matches("line\r\nnext\n", ["line\nnext"]))

    def test_trailing_comments(self):
        command = 'curl "a # b" \'c # d\' $\'e\\\' # f\'   # 204'
        self.assertEqual(command[check_docs.trailing_comment(command):], "# 204")
        self.assertIsNone(check_docs.trailing_comment("# a comment line"))
        self.assertIsNone(check_docs.trailing_comment("echo a#b"))
        multi = "X=$(echo a \\\n  # not this\n  b)   # a b"
        self.assertEqual(multi[check_docs.trailing_comment(multi):], "# a b")


class RunTests(unittest.TestCase):
    """The script made of blocks, run by bash without a server: what it saves and where it fails."""

    def run_blocks(self, text: str):
        blocks, _ = check_docs.parse_blocks("docs/a.md", textwrap.dedent(text))
        work = Path(tempfile.mkdtemp(prefix="check-docs-run-"))
        script, origin, expectations = check_docs.build_script(blocks, "http://127.0.0.1:9", work)
        (work / "s.sh").write_text(script)
        status = subprocess.run(["bash", "-euo", "pipefail", str(work / "s.sh")], cwd=work,
                                capture_output=True, text=True).returncode
        return work, status, origin, expectations

    def test_outputs_are_saved_for_their_comments(self):
        work, status, _, expectations = self.run_blocks("""\
            <!-- check-docs: run -->
            ```sh
            URL=http://127.0.0.1:8080
            X=$(echo "at $URL")   # at http://127.0.0.1:9
            echo "a # b" \\
              c   # a … c
            printf 'one\\ntwo'   # two
            ```
            """)
        self.assertEqual(status, 0)
        self.assertEqual([(e.line, e.pieces) for e in expectations],
                         [(4, ["at http://127.0.0.1:9"]), (6, ["a", "c"]), (7, ["two"])])
        self.assertEqual((work / "out.0").read_text(), "at http://127.0.0.1:9\n")
        self.assertEqual((work / "out.1").read_text(), "a # b c\n")
        self.assertTrue(check_docs.matches((work / "out.2").read_text(), ["two"]))

    def test_a_failing_command_is_named_by_its_line(self):
        work, status, origin, _ = self.run_blocks("""\
            <!-- check-docs: run -->
            ```sh
            f() {
              false
            }
            echo ok
            Y=$(f)
            echo never
            ```
            """)
        self.assertNotEqual(status, 0)
        line = int((work / "failed").read_text().split()[0])
        self.assertEqual(origin[line], ("docs/a.md", 4))


class CommandTests(unittest.TestCase):
    def setUp(self):
        self.root = checkout({
            "Package.swift": 'let products = ["layer-bench", "layer"]\n',
            "Tests/FooTests/BarTests.swift": "@Suite struct BarTests {\n    @Test func works() {}\n}\n",
            "scripts/dev": "#!/bin/sh\n",
            "deploy/make-env.sh": "#!/bin/sh\n",
        })
        layer = self.root / "layer"
        layer.write_text(textwrap.dedent("""\
            #!/bin/sh
            if [ "$1" = admin ]; then printf 'SUBCOMMANDS:\\n  create-app   Make an app.\\n  add-key      Add a key.\\n'
            elif [ "$1" = --help ]; then printf 'SUBCOMMANDS:\\n  dev   Run.\\n  admin   Manage\\n          apps.\\n'
            else printf 'USAGE: layer x\\n'; fi
            """))
        layer.chmod(layer.stat().st_mode | stat.S_IEXEC)
        self.commands = check_docs.Commands(self.root, layer)

    def problems(self, block: str) -> list[str]:
        lines = textwrap.dedent(block).strip("\n").split("\n")
        found = check_docs.check_commands(self.commands, check_docs.Block("README.md", "sh", 10, lines))
        return [str(f) for f in found]

    def test_commands_that_run(self):
        self.assertEqual(self.problems("""\
            scripts/dev      # run it
            bash deploy/make-env.sh
            swift test --filter FooTests
            swift test --filter 'BarTests|Nothing' --skip FooTests.BarTests
            swift build -c release --product layer-bench && swift run -c release layer-bench push --rates none
            SWT=8 .build/debug/layer dev --port 8080
            docker compose exec -T auth layer admin create-app --name "My app"
            layer token --user alice
            """), ["README.md:17: layer token: no such subcommand (layer --help)"])

    def test_commands_that_no_longer_run(self):
        found = self.problems("""\
            scripts/gone
            python3 scripts/missing.py --flag
            swift test --filter NoSuchTests
            swift run layer-nothing
            layer admin remove-app --app x
            """)
        self.assertEqual(len(found), 5, found)
        self.assertTrue(found[0].startswith("README.md:10: no such script: scripts/gone"))
        self.assertIn("README.md:11: no such file: scripts/missing.py", found[1])
        self.assertIn("matches no test", found[2])
        self.assertIn("no product layer-nothing", found[3])
        self.assertIn("layer admin remove-app: no such subcommand", found[4])

    def test_without_a_built_layer_subcommands_are_not_checked(self):
        self.commands = check_docs.Commands(self.root, self.root / "missing")
        self.assertEqual(self.problems("layer nothing\n"), [])


class ErrorAnchorTests(unittest.TestCase):
    def test_every_error_id_needs_its_anchor(self):
        root = checkout({
            "Shared/Models/ErrorBody.swift": """\
                enum ErrorID: String {
                    case notFound = "not_found"
                    case conflict = "conflict"
                }
                let url = "https://github.com/layerline/layerline/blob/main/docs/errors.md#\\(id.rawValue)"
                """,
            "docs/errors.md": '| <a id="not_found"></a>`not_found` |\n',
        })
        found = [str(f) for f in check_docs.check_error_anchors(check_docs.Repository(root))]
        self.assertEqual(found, ["Shared/Models/ErrorBody.swift:3: docs/errors.md has no anchor #conflict for this error"])


if __name__ == "__main__":
    unittest.main()
