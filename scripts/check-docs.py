#!/usr/bin/env python3
"""Checks the manual (README.md, docs/, BENCHMARKS.md, RELIABILITY.md, deploy/**/*.md).

    python3 scripts/check-docs.py              every check; needs the built .build/debug/layer
    python3 scripts/check-docs.py --no-run     links, anchors, paths and commands only (no layer dev)

What it checks, each failure named by file:line:

- Links. Every relative link `[x](path)`, `[x](path#anchor)` and `[x](#anchor)` names a file or
  folder of the repository, and an anchor names a heading of the target page (GitHub's slugs:
  lower case, punctuation dropped but `-` and `_`, spaces to `-`, repeats numbered `-1`, `-2`) or
  an `<a id>` there. Links to this repository on GitHub (`…/layerline/blob/main/<path>#<anchor>`)
  count as relative ones, in any tracked file (nginx's error bodies carry them); other http(s)
  links are not fetched. Every error id of Shared/Models/ErrorBody.swift has its anchor in
  docs/errors.md, where the `url` of an error points.
- Paths. An inline code span that names a path of the repository (`Services/…`, `scripts/…`)
  names one that exists, unless git ignores it (deploy/certs/ is made by a script).
- Commands. In every `sh` block, `scripts/x`, `bash x`, `python3 x` name files that exist,
  `swift test --filter/--skip P` matches a test target, type or function under Tests/,
  `--product P` and `swift run P` name a product of Package.swift, and `layer <subcommand>`
  (any path ending in /layer too) is a subcommand `layer --help` lists.
- Walk-throughs. A `sh` block right after the line `<!-- check-docs: run -->` is run, verbatim,
  with `bash -euo pipefail` against a fresh `layer dev` (its own port, STUN port and PostgreSQL,
  data directory `.layer` in a temporary folder that is the working directory, with `.build`
  linking to this checkout's); `http://127.0.0.1:8080` in the block becomes that server's URL.
  `<!-- check-docs: run after docs/sync.md -->` runs the blocks of that page first, in the same
  shell, so a page can go on from another's variables. Every block runs once, in one shell, pages
  before the pages that go on from them. A comment at the end of a command's last line is its
  expected output: an HTTP status first is checked against the last response curl received
  (`# 204`), and the rest must appear in what the command prints, `…` standing for anything
  (`# {"anchor":1,…}`). Any command that fails stops the run.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GITHUB_BLOB = "https://github.com/layerline/layerline/blob/main/"
RUN_MARKER = re.compile(r"^<!--\s*check-docs:\s*run(?:\s+after\s+(\S+))?\s*-->\s*$")
ANY_MARKER = re.compile(r"^<!--\s*check-docs:")
SHELL_LANGUAGES = {"sh", "bash", "shell"}
DEV_URL = "http://127.0.0.1:8080"
PATH_SPAN = re.compile(r"^(?:Services|Shared|Tests|scripts|deploy|Benchmarks|docs)/[A-Za-z0-9_./-]*$")


@dataclass
class Failure:
    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


@dataclass
class Block:
    """A fenced code block: its language, first content line (1-based) and lines."""
    path: str
    language: str
    line: int
    lines: list[str]
    run: bool = False
    after: str | None = None


@dataclass
class Page:
    path: str
    text: str
    blocks: list[Block] = field(default_factory=list)


# --- Markdown ------------------------------------------------------------------------------------

def parse_blocks(path: str, text: str) -> tuple[list[Block], list[Failure]]:
    """The fenced blocks of a page, with their run markers, and misplaced markers."""
    blocks: list[Block] = []
    failures: list[Failure] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        opening = re.match(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)", lines[i])
        if not opening:
            if ANY_MARKER.match(lines[i].strip()):
                following = lines[i + 1] if i + 1 < len(lines) else ""
                if not RUN_MARKER.match(lines[i].strip()):
                    failures.append(Failure(path, i + 1, f"unknown check-docs marker: {lines[i].strip()}"))
                elif not re.match(r"^\s*(`{3,}|~{3,})\s*(sh|bash|shell)\s*$", following):
                    failures.append(Failure(path, i + 1, "a run marker must stand right before a ```sh fence"))
            i += 1
            continue
        fence, language = opening.group(2), opening.group(3).lower()
        marker = RUN_MARKER.match(lines[i - 1].strip()) if i > 0 else None
        start = i + 1
        j = start
        while j < len(lines) and not lines[j].strip().startswith(fence):
            j += 1
        blocks.append(Block(path, language, start + 1, lines[start:j], run=bool(marker),
                            after=marker.group(1) if marker else None))
        i = j + 1
    return blocks, failures


def blank_code(text: str) -> str:
    """The text with fenced blocks and inline code spans blanked out, line numbers kept."""
    joined = blank_fences(text)
    return re.sub(r"(`+)(.+?)\1", lambda m: " " * len(m.group(0)), joined, flags=re.S)


def code_spans(text: str) -> list[tuple[int, str]]:
    """Inline code spans outside fenced blocks, with their line numbers."""
    out = []
    fence = None
    lines = []
    for line in text.split("\n"):
        stripped = line.strip()
        if fence:
            if stripped.startswith(fence):
                fence = None
            lines.append("")
            continue
        opening = re.match(r"^(`{3,}|~{3,})", stripped)
        if opening:
            fence = opening.group(1)
            lines.append("")
            continue
        lines.append(line)
    joined = "\n".join(lines)
    for match in re.finditer(r"(`+)(.+?)\1", joined, flags=re.S):
        out.append((joined.count("\n", 0, match.start()) + 1, match.group(2).strip()))
    return out


def heading_text(raw: str) -> str:
    """A heading's text as GitHub renders it: no markup, links as their text, no HTML tags."""
    text = re.sub(r"<[^>]+>", "", raw)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = text.replace("`", "")
    return text.strip().rstrip("#").strip()


def slug(text: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped, spaces to `-`."""
    text = heading_text(text).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every anchor a page has: its headings' slugs (repeats numbered) and explicit `<a id|name>`."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    plain = blank_fences(text)
    for line in plain.split("\n"):
        heading = re.match(r"^ {0,3}#{1,6}\s+(.*)$", line)
        if heading:
            base = slug(heading.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    for match in re.finditer(r"<a\s+[^>]*(?:id|name)\s*=\s*\"([^\"]+)\"", plain):
        found.add(match.group(1))
    return found


def blank_fences(text: str) -> str:
    """The text with fenced blocks blanked out, line numbers kept (inline code stays)."""
    out = []
    fence = None
    for line in text.split("\n"):
        stripped = line.strip()
        if fence:
            if stripped.startswith(fence):
                fence = None
            out.append("")
            continue
        opening = re.match(r"^(`{3,}|~{3,})", stripped)
        if opening:
            fence = opening.group(1)
            out.append("")
            continue
        out.append(line)
    return "\n".join(out)


LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$", re.M)


def links(text: str) -> list[tuple[int, str]]:
    """The link targets of a page outside code, with their line numbers."""
    plain = blank_code(text)
    out = []
    for pattern in (LINK, REFERENCE):
        for match in pattern.finditer(plain):
            out.append((plain.count("\n", 0, match.start(1)) + 1, match.group(1)))
    return sorted(out)


class Repository:
    """The files of the checkout, and the anchors of its pages (read once)."""

    def __init__(self, root: Path):
        self.root = root
        self._anchors: dict[Path, set[str]] = {}

    def exists(self, relative: str) -> bool:
        return (self.root / relative).exists()

    def anchors_of(self, path: Path) -> set[str]:
        if path not in self._anchors:
            self._anchors[path] = anchors(path.read_text(encoding="utf-8"))
        return self._anchors[path]

    def ignored(self, relative: str) -> bool:
        try:
            return subprocess.run(["git", "-C", str(self.root), "check-ignore", "-q", relative],
                                  capture_output=True).returncode == 0
        except OSError:
            return False


def check_link(repo: Repository, source: str, line: int, target: str, text: str | None = None) -> list[Failure]:
    """A link of `source` (relative to the repository) to `target`; `text` is the source's own text."""
    if target.startswith(GITHUB_BLOB):
        target = "/" + target[len(GITHUB_BLOB):]
    elif re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("//"):
        return []  # http(s), mailto and the like are not fetched
    path_part, _, anchor = target.partition("#")
    path_part = urllib.parse.unquote(path_part)
    if path_part.startswith("/"):
        resolved = (repo.root / path_part.lstrip("/")).resolve()
    elif path_part:
        resolved = ((repo.root / source).parent / path_part).resolve()
    else:
        resolved = (repo.root / source).resolve()
    try:
        shown = resolved.relative_to(repo.root)
    except ValueError:
        return [Failure(source, line, f"link outside the repository: {target}")]
    if not resolved.exists():
        return [Failure(source, line, f"dead link: {target} ({shown} does not exist)")]
    if anchor and resolved.suffix.lower() == ".md":
        names = anchors(text) if (text is not None and not path_part) else repo.anchors_of(resolved)
        if urllib.parse.unquote(anchor) not in names:
            return [Failure(source, line, f"dead anchor: {target} (no heading #{anchor} in {shown})")]
    return []


def check_links(repo: Repository, page: Page) -> list[Failure]:
    failures = []
    for line, target in links(page.text):
        if not target:
            failures.append(Failure(page.path, line, "empty link"))
            continue
        failures += check_link(repo, page.path, line, target, page.text)
    return failures


def check_paths(repo: Repository, page: Page) -> list[Failure]:
    failures = []
    for line, span in code_spans(page.text):
        if PATH_SPAN.match(span) and not repo.exists(span) and not repo.ignored(span):
            failures.append(Failure(page.path, line, f"no such path: {span}"))
    return failures


def check_error_anchors(repo: Repository) -> list[Failure]:
    """Every error id has the anchor in docs/errors.md that ErrorBody's `url` points at."""
    source = "Shared/Models/ErrorBody.swift"
    text = (repo.root / source).read_text(encoding="utf-8")
    url = re.search(r'"' + re.escape(GITHUB_BLOB) + r'([^"#]+)#([^"]*)"', text)
    if not url:
        return [Failure(source, 1, "no error url into the manual found")]
    page, pattern = url.group(1), url.group(2)
    line = text.count("\n", 0, url.start()) + 1
    if not (repo.root / page).exists():
        return [Failure(source, line, f"the error url names {page}, which does not exist")]
    prefix = pattern.split("\\(")[0]
    names = repo.anchors_of((repo.root / page).resolve())
    failures = []
    for match in re.finditer(r'^\s*case\s+\w+\s*=\s*"(\w+)"', text, re.M):
        if prefix + match.group(1) not in names:
            failures.append(Failure(source, text.count("\n", 0, match.start()) + 1,
                                    f"{page} has no anchor #{prefix + match.group(1)} for this error"))
    return failures


def check_github_urls(repo: Repository) -> list[Failure]:
    """Links to this repository on GitHub with a literal path, in every tracked text file."""
    try:
        listed = subprocess.run(["git", "-C", str(repo.root), "ls-files"], capture_output=True,
                                text=True, check=True).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        return []
    failures = []
    for name in listed:
        if not name or name.endswith(".md"):
            continue
        path = repo.root / name
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        for match in re.finditer(re.escape(GITHUB_BLOB) + r"[^\s\"'`)<>]*", text):
            target = match.group(0)
            if "\\(" in target or "$" in target:
                continue  # an interpolated url: its page is checked by check_error_anchors
            failures += check_link(repo, name, text.count("\n", 0, match.start()) + 1, target)
    return failures


# --- Commands in sh blocks -----------------------------------------------------------------------

class Commands:
    """What the commands of the manual may name: tests, products, `layer` subcommands."""

    def __init__(self, root: Path, layer: Path | None):
        self.root = root
        self.layer = layer
        self._subcommands: dict[tuple[str, ...], set[str] | None] = {}
        self._tests: list[str] | None = None
        self._package = (root / "Package.swift").read_text(encoding="utf-8")

    def test_names(self) -> list[str]:
        if self._tests is None:
            names = []
            for target in sorted(p for p in (self.root / "Tests").iterdir() if p.is_dir()):
                names.append(target.name)
                for source in target.rglob("*.swift"):
                    text = source.read_text(encoding="utf-8")
                    for kind, name in re.findall(r"\b(struct|class|enum|actor|func)\s+(\w+)", text):
                        names.append(f"{target.name}.{name}" if kind != "func" else f"{target.name}/{name}")
            self._tests = names
        return self._tests

    def subcommands(self, path: tuple[str, ...]) -> set[str] | None:
        """`layer <path> --help`'s subcommands, or None when `layer` is not built."""
        if path not in self._subcommands:
            if not self.layer or not self.layer.exists():
                self._subcommands[path] = None
            else:
                help_text = subprocess.run([str(self.layer), *path, "--help"], capture_output=True,
                                           text=True).stdout
                section = help_text.split("SUBCOMMANDS:", 1)
                names = set()
                if len(section) == 2:
                    for line in section[1].split("\n"):
                        entry = re.match(r"^  (\S+)", line)
                        if entry and not line.startswith("   "):
                            names.add(entry.group(1))
                self._subcommands[path] = names
        return self._subcommands[path]

    def product(self, name: str) -> bool:
        return f'"{name}"' in self._package

    def check(self, words: list[str]) -> list[str]:
        """Problems of one simple command, as words (its environment assignments included)."""
        while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
            words = words[1:]
        if not words:
            return []
        problems = []
        program = words[0]
        if re.match(r"^(\./)?(scripts|deploy)/", program) and not (self.root / program).exists():
            problems.append(f"no such script: {program}")
        if program in ("bash", "sh", "python3", "python") and len(words) > 1:
            script = next((w for w in words[1:] if not w.startswith("-")), None)
            if script and "/" in script and not re.search(r"[$<*]", script) and not (self.root / script).exists() \
                    and words[1] != "-c":
                problems.append(f"no such file: {script}")
        if program == "swift" and len(words) > 1:
            problems += self.check_swift(words)
        for index, word in enumerate(words):
            if word == "layer" or word.endswith("/layer"):
                problems += self.check_layer(words[index + 1:])
                break
        return problems

    def check_swift(self, words: list[str]) -> list[str]:
        problems = []
        for index, word in enumerate(words[:-1]):
            value = words[index + 1]
            if word in ("--filter", "--skip") and words[1] == "test":
                if not any(re.search(value, name) for name in self.test_names()):
                    problems.append(f"swift test {word} {value} matches no test under Tests/")
            if word == "--product" and not self.product(value):
                problems.append(f"no product {value} in Package.swift")
        if words[1] == "run":
            rest = [w for w in words[2:]]
            while rest and rest[0].startswith("-"):
                rest = rest[2:] if rest[0] in ("-c", "--configuration") else rest[1:]
            if rest and not self.product(rest[0]):
                problems.append(f"no product {rest[0]} in Package.swift")
        return problems

    def check_layer(self, arguments: list[str]) -> list[str]:
        path: tuple[str, ...] = ()
        for word in arguments:
            if word.startswith("-") or not re.match(r"^[a-z][a-z-]*$", word):
                break
            known = self.subcommands(path)
            if known is None:
                return []  # not built: nothing to compare with
            if not known:
                break  # a leaf command: the rest are its arguments
            words = [w for w in re.split(r"\|", word) if w]
            for name in words:
                if name not in known:
                    return [f"layer {' '.join(path + (name,))}: no such subcommand ({' '.join(('layer',) + path + ('--help',))})"]
            path = path + (words[0],)
        return []


def shell_commands(lines: list[str], first_line: int) -> list[tuple[int, list[str]]]:
    """The simple commands of a block (continuation lines joined), as words, with line numbers."""
    out = []
    buffer, start = "", first_line
    for offset, line in enumerate(lines):
        if not buffer:
            start = first_line + offset
        buffer += line
        if buffer.endswith("\\"):
            buffer = buffer[:-1] + " "
            continue
        text, buffer = buffer, ""
        try:
            lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|()<>")
            lexer.whitespace_split = True
            lexer.commenters = "#"
            tokens = list(lexer)
        except ValueError:
            continue  # a multi-line string or the like: not a command line
        command: list[str] = []
        for token in tokens + [";"]:
            if token and set(token) <= set(";&|()<>"):
                if command:
                    out.append((start, command))
                command = []
            else:
                command.append(token)
    return out


def check_commands(commands: Commands, block: Block) -> list[Failure]:
    failures = []
    for line, words in shell_commands(block.lines, block.line):
        for problem in commands.check(words):
            failures.append(Failure(block.path, line, problem))
    return failures


# --- Running the walk-throughs -------------------------------------------------------------------

@dataclass
class Expectation:
    number: int
    path: str
    line: int
    status: int | None
    pieces: list[str]


def parse_expectation(comment: str) -> tuple[int | None, list[str]]:
    """`201 {"id":…}` → (201, ['{"id":']): an HTTP status first, then text with … for anything."""
    status = None
    match = re.match(r"^(\d{3})(?:\s+|$)(.*)$", comment.strip(), re.S)
    if match:
        status, comment = int(match.group(1)), match.group(2)
    return status, [piece.strip() for piece in comment.split("…") if piece.strip()]


def matches(output: str, pieces: list[str]) -> bool:
    """Whether the pieces appear in the output in their order."""
    position = 0
    output = output.replace("\r", "")
    for piece in pieces:
        found = output.find(piece, position)
        if found < 0:
            return False
        position = found + len(piece)
    return True


def trailing_comment(command: str) -> int | None:
    """Where the comment on the last line of a shell command starts (outside quotes), or None."""
    quote = None
    index = 0
    last_line = command.rfind("\n") + 1
    while index < len(command):
        char = command[index]
        if quote == "'":
            if char == "'":
                quote = None
        elif quote == "$'":
            if char == "\\":
                index += 1
            elif char == "'":
                quote = None
        elif quote == '"':
            if char == "\\":
                index += 1
            elif char == '"':
                quote = None
        else:
            if char == "\\":
                index += 1
            elif char == "$" and command[index + 1:index + 2] == "'":
                quote = "$'"
                index += 1
            elif char in "'\"":
                quote = char
            elif char == "#" and (index == 0 or command[index - 1] in " \t\n"):
                if index >= last_line:
                    # a comment after a command on the last line; a line that is all comment says nothing
                    return index if command[last_line:index].strip() else None
                # a comment inside an earlier line: skip to its end
                end = command.find("\n", index)
                index = len(command) if end < 0 else end
                continue
        index += 1
    return None


def complete(command: str) -> bool:
    """Whether bash reads the text as whole commands (a line that ends in `\\` goes on)."""
    if re.search(r"(?<!\\)(\\\\)*\\$", command):
        return False
    return subprocess.run(["bash", "-n"], input=command, text=True, capture_output=True).returncode == 0


PRELUDE = r"""set -o errtrace
shopt -s inherit_errexit
__cd_fail() { [ -s "$__cd_dir/failed" ] || echo "$1 $2" > "$__cd_dir/failed"; }
trap '__cd_fail $LINENO $?' ERR
__cd_save() {
    printf '%s\n' "$__out" > "$__cd_dir/out.$1"
    if [ -f "$__cd_dir/headers" ]; then cp "$__cd_dir/headers" "$__cd_dir/headers.$1"; fi
    printf '%s\n' "$__out"
}
"""


def build_script(blocks: list[Block], base_url: str, work: Path) -> tuple[str, dict[int, tuple[str, int]], list[Expectation]]:
    """The shell script of the blocks, where each of its lines comes from, and the expectations."""
    lines = [f"__cd_dir={shlex.quote(str(work))}"] + PRELUDE.rstrip("\n").split("\n")
    origin: dict[int, tuple[str, int]] = {}
    expectations: list[Expectation] = []
    for block in blocks:
        buffer: list[str] = []
        start = 0
        for offset, line in enumerate(block.lines):
            if not buffer:
                start = offset
            buffer.append(line.replace(DEV_URL, base_url))
            text = "\n".join(buffer)
            if not complete(text):
                continue
            comment = trailing_comment(text)
            if comment is not None:
                status, pieces = parse_expectation(text[comment + 1:])
                command = text[:comment].rstrip()
                number = len(expectations)
                expectations.append(Expectation(number, block.path, block.line + offset, status, pieces))
                assignment = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)=\$\(", command)
                reset = 'rm -f "$__cd_dir/headers"; '
                if assignment and command.endswith(")"):
                    text = reset + command + f'; __out=${assignment.group(1)}; __cd_save {number}'
                else:
                    text = reset + "__out=$(" + command + f"\n); __cd_save {number}"
            for index, emitted in enumerate(text.split("\n")):
                origin[len(lines) + 1] = (block.path, block.line + min(start + index, offset))
                lines.append(emitted)
            buffer = []
        if buffer:
            raise ValueError(f"{block.path}:{block.line + start}: the block ends inside a command")
    return "\n".join(lines) + "\n", origin, expectations


def order_blocks(pages: dict[str, Page]) -> tuple[list[Block], list[Failure]]:
    """Every run block, pages before the pages that go on from them."""
    failures: list[Failure] = []
    runs = {path: [b for b in page.blocks if b.run] for path, page in pages.items()}
    runs = {path: blocks for path, blocks in runs.items() if blocks}
    ordered: list[Block] = []
    done: set[str] = set()

    def visit(path: str, trail: tuple[str, ...]) -> None:
        if path in done:
            return
        if path in trail:
            failures.append(Failure(path, runs[path][0].line, f"run blocks go on from each other in a circle: {trail}"))
            return
        for block in runs[path]:
            if block.after:
                if block.after not in runs:
                    failures.append(Failure(path, block.line - 2, f"runs after {block.after}, which has no run block"))
                else:
                    visit(block.after, trail + (path,))
        done.add(path)
        ordered.extend(runs[path])

    for path in sorted(runs, key=lambda p: (p != "README.md", p)):
        visit(path, ())
    return ordered, failures


class LayerDev:
    """`layer dev` on a free port in a data directory of its own, stopped with its PostgreSQL."""

    def __init__(self, layer: Path, folder: Path):
        self.data = folder / ".layer"
        self.log = folder / "dev.log"
        environment = {k: v for k, v in os.environ.items() if k != "LAYER_DATABASE_URL"}
        with open(self.log, "w") as log:
            self.process = subprocess.Popen(
                [str(layer), "dev", "--port", "0", "--stun-port", "0", "--data-dir", str(self.data)],
                stdout=log, stderr=subprocess.STDOUT, env=environment, cwd=folder)
        dev_json = self.data / "dev.json"
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if dev_json.exists() and dev_json.stat().st_size > 0:
                match = re.search(r'"base_url"\s*:\s*"([^"]+)"', dev_json.read_text())
                if match:
                    self.base_url = match.group(1)
                    return
            if self.process.poll() is not None:
                break
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"layer dev did not start:\n{self.log.read_text()[-3000:]}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        # As root the cluster lives outside the data directory, in a folder named after its path.
        if os.geteuid() == 0:
            digest = hashlib.sha256(str(self.data).encode()).hexdigest()[:16]
            shutil.rmtree(f"/var/lib/layerline/{digest}", ignore_errors=True)


def run_blocks(blocks: list[Block], layer: Path, timeout: float) -> list[Failure]:
    folder = Path(tempfile.mkdtemp(prefix="check-docs-"))
    work = folder / ".check-docs"
    work.mkdir()
    (work / ".curlrc").write_text(f'dump-header = "{work}/headers"\n')
    build = (ROOT / ".build").resolve()
    (folder / ".build").symlink_to(build)
    failures: list[Failure] = []
    dev = None
    try:
        try:
            dev = LayerDev(layer, folder)
        except RuntimeError as error:
            return [Failure(blocks[0].path, blocks[0].line, str(error))]
        script, origin, expectations = build_script(blocks, dev.base_url, work)
        (work / "walk-through.sh").write_text(script)
        environment = dict(os.environ, CURL_HOME=str(work))
        environment.pop("LAYER_DATABASE_URL", None)
        log_path = work / "walk-through.log"
        with open(log_path, "w") as log:
            shell = subprocess.Popen(["bash", "-euo", "pipefail", str(work / "walk-through.sh")], cwd=folder,
                                     stdout=log, stderr=subprocess.STDOUT, env=environment,
                                     start_new_session=True)
            try:
                status = shell.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                status = None
            finally:
                try:
                    os.killpg(shell.pid, signal.SIGKILL)  # what the blocks left in the background
                except ProcessLookupError:
                    pass
                shell.wait()
        tail = "\n".join("    " + line for line in log_path.read_text(errors="replace").split("\n")[-25:])
        if status is None:
            failures.append(Failure(blocks[0].path, blocks[0].line,
                                    f"the walk-throughs did not finish within {timeout:.0f} s; the end of their output:\n{tail}"))
        elif status != 0:
            failed = (work / "failed").read_text().split() if (work / "failed").exists() else []
            where = origin.get(int(failed[0])) if failed else None
            path, line = where if where else (blocks[0].path, blocks[0].line)
            failures.append(Failure(path, line, f"this command failed (exit status {failed[1] if failed else status}); "
                                                f"the end of the output:\n{tail}"))
        for expectation in expectations:
            out = work / f"out.{expectation.number}"
            if not out.exists():
                continue  # the run stopped before it
            output = out.read_text(errors="replace")
            if expectation.status is not None:
                headers = work / f"headers.{expectation.number}"
                statuses = re.findall(r"^HTTP/[\d.]+ (\d{3})", headers.read_text(errors="replace"), re.M) \
                    if headers.exists() else []
                if not statuses:
                    failures.append(Failure(expectation.path, expectation.line,
                                            f"expected HTTP {expectation.status}, but no response was received"))
                elif int(statuses[-1]) != expectation.status:
                    failures.append(Failure(expectation.path, expectation.line,
                                            f"expected HTTP {expectation.status}, got {statuses[-1]}: {output.strip()[:300]}"))
            if not matches(output, expectation.pieces):
                shown = output.strip() if len(output) < 1500 else output.strip()[:1500] + "…"
                failures.append(Failure(expectation.path, expectation.line,
                                        f"the output does not match the comment {' … '.join(expectation.pieces)!r}; it was:\n    {shown}"))
    finally:
        if dev:
            dev.stop()
        shutil.rmtree(folder, ignore_errors=True)
    return failures


# --- Main ----------------------------------------------------------------------------------------

def manual_pages(root: Path) -> list[str]:
    names = ["README.md", "BENCHMARKS.md", "RELIABILITY.md"]
    names += sorted(str(p.relative_to(root)) for p in (root / "docs").rglob("*.md"))
    names += sorted(str(p.relative_to(root)) for p in (root / "deploy").rglob("*.md"))
    return [n for n in names if (root / n).exists()]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-run", action="store_true", help="do not run the walk-throughs")
    parser.add_argument("--layer", default=str(ROOT / ".build/debug/layer"), help="the built layer binary")
    parser.add_argument("--timeout", type=float, default=600, help="seconds the walk-throughs may take")
    arguments = parser.parse_args(argv)
    layer = Path(arguments.layer)
    repo = Repository(ROOT)
    pages: dict[str, Page] = {}
    failures: list[Failure] = []
    for name in manual_pages(ROOT):
        page = Page(name, (ROOT / name).read_text(encoding="utf-8"))
        page.blocks, misplaced = parse_blocks(name, page.text)
        failures += misplaced
        pages[name] = page
    if not arguments.no_run and not layer.exists():
        print(f"check-docs: no {layer}: run swift build first (or --no-run)", file=sys.stderr)
        return 2
    commands = Commands(ROOT, layer)
    for page in pages.values():
        failures += check_links(repo, page)
        failures += check_paths(repo, page)
        for block in page.blocks:
            if block.language in SHELL_LANGUAGES and not block.run:
                failures += check_commands(commands, block)
    failures += check_error_anchors(repo)
    failures += check_github_urls(repo)
    blocks, order_failures = order_blocks(pages)
    failures += order_failures
    ran = ""
    if not arguments.no_run and blocks and not order_failures:
        started = time.monotonic()
        failures += run_blocks(blocks, layer, arguments.timeout)
        ran = f", {len(blocks)} walk-through blocks run in {time.monotonic() - started:.0f} s"
    for failure in failures:
        print(failure, file=sys.stderr)
    links_count = sum(len(links(p.text)) for p in pages.values())
    if failures:
        print(f"check-docs: {len(failures)} problem(s) in {len(pages)} pages", file=sys.stderr)
        return 1
    print(f"check-docs: {len(pages)} pages, {links_count} links{ran}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
