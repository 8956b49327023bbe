"""The documentation holds together, and the repository stands on its own.

- Every relative link and image in README.md and docs/*.md names a file of the repository, and a
  `#anchor` names a heading of its target page (GitHub's slugs), so a reader never follows a dead link.
- Every repository path a page names in backticks (`core/run/outputs.py`) exists.
- README.md stays a front page: under 10,000 bytes (`wc -c README.md`), the rest is in docs/.
- No file of the repository cites a document outside it: what the code relies on (the CLI contract,
  the layers, where outputs go, the format facts) is written in docs/, and the code cites those pages.
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import unquote

import pytest

from tests.locations import ROOT

README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]

# The texts that would cite the sibling folder outside the repository, built from parts so that this file
# does not hold them itself.
_SIBLING = "sha" + "red"
OUTSIDE_CITATIONS = (_SIBLING + "/docs", ".." + "/" + _SIBLING)
# In Python and Markdown files not even the folder's name followed by a slash (the grep).
OUTSIDE_FOLDER = _SIBLING + "/"
# What is not the repository's own text: environments, git's store, caches and build outputs.
SKIPPED_FOLDERS = {".venv", ".git", "__pycache__", ".pytest_cache", ".import_linter_cache"}
SKIPPED_PATHS = {"tests/benchmarks/.cache", "build", "dist"}

_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_IMG_TAG = re.compile(r"<img\b[^>]*\bsrc=\"([^\"]+)\"", re.IGNORECASE)
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
_REPO_PATH = re.compile(r"`((?:core|gui|tests|packaging|resources|checkpoint_inspector|docs)/[\w./-]+"
                        r"\.(?:py|md|sh|xml|plist|spec|txt|png|json))`")


def _prose_lines(text: str) -> list[str]:
    """The lines of a Markdown text outside fenced code blocks."""
    lines, fenced = [], False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(line)
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: the text as rendered (links as their text, no backticks or
    emphasis stars), lower case, without punctuation but for `-` and `_`, spaces turned into hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("`", "").replace("*", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found: set[str] = set()
    counts: dict[str, int] = {}
    for line in _prose_lines(page.read_text(encoding="utf-8")):
        match = _HEADING.match(line)
        if match:
            base = slug(match.group(2))
            count = counts.get(base, 0)
            counts[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(page: Path) -> list[str]:
    """The targets of the page's links and images, code spans and code blocks left out."""
    targets = []
    for line in _prose_lines(page.read_text(encoding="utf-8")):
        line = _CODE_SPAN.sub("", line)
        targets += _LINK.findall(line) + _IMG_TAG.findall(line)
    return targets


def broken_links(page: Path) -> list[str]:
    broken = []
    for target in links(page):
        if _SCHEME.match(target):  # a web address: not a file of the repository
            continue
        path_part, _, anchor = target.partition("#")
        destination = (page.parent / unquote(path_part)).resolve() if path_part else page
        if ROOT not in destination.parents and destination != ROOT:
            broken.append(f"{target}: outside the repository")
        elif not destination.exists():
            broken.append(f"{target}: no such file")
        elif anchor and destination.suffix == ".md" and anchor not in anchors(destination):
            broken.append(f"{target}: no heading #{anchor} in {destination.relative_to(ROOT)}")
    return broken


def test_the_pages_are_there():
    names = {page.name for page in PAGES}
    assert {"README.md", "cli.md", "formats.md", "window.md", "api.md", "benchmarks.md", "robustness.md",
            "architecture.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(ROOT).as_posix())
def test_every_link_resolves(page):
    assert broken_links(page) == []


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(ROOT).as_posix())
def test_every_path_named_exists(page):
    named = set(_REPO_PATH.findall(page.read_text(encoding="utf-8")))
    placeholders = [p for p in named if any(part.isupper() for part in re.split(r"[/.]", p))]
    assert sorted(p for p in named - set(placeholders) if not (ROOT / p).exists()) == []


def test_the_readme_links_every_page():
    linked = {target.partition("#")[0] for target in links(README)}
    pages = {f"docs/{page.name}" for page in PAGES if page != README}
    assert sorted(pages - linked) == []


def test_the_link_check_can_fail(tmp_path, monkeypatch):
    root = tmp_path.resolve()
    monkeypatch.setitem(globals(), "ROOT", root)
    (root / "other.md").write_text("# A heading, with `code`\n\n## A heading, with `code`\n")
    page = root / "page.md"
    page.write_text("[ok](other.md#a-heading-with-code) [ok](other.md#a-heading-with-code-1) "
                    "![gone](missing.png) [bad](other.md#no-such) `[skipped](nowhere.md)`\n"
                    "```\n[skipped](nowhere.md)\n```\n[web](https://example.org/x) [up](../../x.md)\n")
    assert broken_links(page) == ["missing.png: no such file",
                                  "other.md#no-such: no heading #no-such in other.md",
                                  "../../x.md: outside the repository"]


def test_the_readmes_example_is_the_apis_first():
    """The README's Python example is docs/api.md's first one, which the suite runs (tests/api/)."""
    def first_example(page: Path) -> str:
        return re.search(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), re.S).group(1)

    assert first_example(README) == first_example(ROOT / "docs" / "api.md")


def test_the_readme_is_a_front_page():
    size = len(README.read_bytes())
    assert size < 10_000, f"README.md is {size} bytes: move the details into docs/"


def repository_files(root: Path) -> list[Path]:
    """Every file of the repository, tracked or not, but for the skipped folders (environments, git's
    store, caches, build outputs)."""
    found = []
    for folder, subfolders, files in os.walk(root):
        here = Path(folder)
        relative = here.relative_to(root).as_posix()
        subfolders[:] = [name for name in subfolders if name not in SKIPPED_FOLDERS
                         and not name.endswith(".egg-info")
                         and (name if relative == "." else f"{relative}/{name}") not in SKIPPED_PATHS]
        found += [here / name for name in files]
    return found


def outside_citations(root: Path) -> list[str]:
    found = []
    for path in repository_files(root):
        try:
            data = path.read_bytes()
        except OSError:  # a dangling link, a socket: nothing to read
            continue
        needles = OUTSIDE_CITATIONS + ((OUTSIDE_FOLDER,) if path.suffix in (".py", ".md") else ())
        found += [f"{path.relative_to(root).as_posix()}: {needle}" for needle in needles
                  if needle.encode() in data]
    return found


def test_no_file_cites_a_document_outside_the_repository():
    assert outside_citations(ROOT) == []


def test_the_citation_check_reads_the_repository():
    scanned = {path.relative_to(ROOT).as_posix() for path in repository_files(ROOT)}
    assert {"README.md", "docs/cli.md", "core/cli/__init__.py", "tests/fuzz/commands.py",
            "tests/test_docs.py", ".importlinter"} <= scanned
    assert not any(name.startswith((".venv/", ".git/", "tests/benchmarks/.cache/")) or "__pycache__" in name
                   for name in scanned)


def test_the_citation_check_can_fail(tmp_path):
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "module.py").write_text(f'"""The contract is in {OUTSIDE_CITATIONS[0]}/design.md."""\n')
    (tmp_path / "notes.txt").write_text(f"see {OUTSIDE_CITATIONS[1]}\n")
    (tmp_path / "page.md").write_text(f"the {OUTSIDE_FOLDER}folder\n")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "ignored.py").write_text(OUTSIDE_CITATIONS[0])
    assert sorted(outside_citations(tmp_path)) == sorted([
        f"core/module.py: {OUTSIDE_CITATIONS[0]}", f"core/module.py: {OUTSIDE_FOLDER}",
        f"notes.txt: {OUTSIDE_CITATIONS[1]}", f"page.md: {OUTSIDE_FOLDER}"])
