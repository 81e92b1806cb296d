"""README.rst is the front door: it parses cleanly, every link in it resolves inside the checkout
(files that exist, pages of the documentation site, anchors those pages define), its bot and its
test run as written, and the docs' front page shows the same text."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

import docutils.core
import docutils.nodes
import docutils.utils

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = ROOT / "README.rst"
DOCS = ROOT / "docs"

#: The comments that enclose the part of the README the docs' front page includes.
FRONT_DOOR = (".. front-door-start\n", ".. front-door-end\n")


def _doctree(text: str) -> docutils.nodes.document:
    """``text`` parsed as docutils (as a code host renders it); any warning raises."""
    return docutils.core.publish_doctree(
        text,
        settings_overrides={"report_level": 2, "halt_level": 2, "warning_stream": False},
    )


def _readme_links() -> list[str]:
    """Every link target of the README: references' URIs and images' sources."""
    tree = _doctree(README.read_text())
    links = [node["refuri"] for node in tree.findall(docutils.nodes.reference) if "refuri" in node]
    links += [node["uri"] for node in tree.findall(docutils.nodes.image)]
    return links


def _anchors(page: pathlib.Path) -> set[str]:
    """The ids a reStructuredText page defines: one per section title and explicit label."""
    lines = page.read_text().splitlines()
    names = [
        title
        for title, underline in zip(lines, lines[1:], strict=False)
        if title.strip() and re.fullmatch(r"([=\-~^\"'`#*+.:_])\1*", underline) and len(underline) >= len(title)
    ]
    names += re.findall(r"^\.\. _([^:`]+):\s*$", page.read_text(), re.MULTILINE)
    return {docutils.nodes.make_id(name) for name in names}


def _site_pages() -> set[pathlib.Path]:
    """The pages of the documentation site: every page a toctree of the index or the API index lists."""
    pages = {DOCS / "index.rst"}
    for index in (DOCS / "index.rst", DOCS / "api" / "index.rst"):
        in_toctree = False
        for line in index.read_text().splitlines():
            if line.startswith(".. toctree::"):
                in_toctree = True
            elif in_toctree and line and not line.startswith(" "):
                in_toctree = False
            elif in_toctree and line.strip() and not line.strip().startswith(":"):
                pages.add(index.parent / f"{line.strip()}.rst")
    return pages


def test_the_readme_parses_without_a_warning():
    # An unknown reference name (a section that moved away) or a malformed table is a warning.
    _doctree(README.read_text())


def test_every_link_of_the_readme_resolves_inside_the_checkout():
    links = _readme_links()
    assert len(links) >= 20, links  # the links into the docs site are there
    pages = _site_pages()
    problems = []
    for link in links:
        if re.match(r"[a-z][a-z0-9+.-]*:", link):
            problems.append(f"{link}: an absolute URL; link to a file of the checkout")
            continue
        path, _, anchor = link.partition("#")
        target = (ROOT / path).resolve()
        if not target.is_file():
            problems.append(f"{link}: no such file")
            continue
        if target.is_relative_to(DOCS) and target.suffix == ".rst" and target not in pages:
            problems.append(f"{link}: not a page of the documentation site (no toctree lists it)")
        if anchor and anchor not in _anchors(target):
            problems.append(f"{link}: {path} has no section or label with the id {anchor!r}")
    assert problems == []


def test_the_anchor_check_reads_titles_and_labels(tmp_path: pathlib.Path):
    page = tmp_path / "page.rst"
    page.write_text("Title\n=====\n\n.. _some-label:\n\nRunning several processes\n-------------------------\n")
    assert _anchors(page) == {"title", "some-label", "running-several-processes"}


def _python_blocks() -> dict[str, str]:
    """The README's Python code blocks, by the title of the section that holds each one."""
    blocks: dict[str, str] = {}
    tree = _doctree(README.read_text())
    for section in tree.findall(docutils.nodes.section):
        title = section[0].astext()
        for block in section.findall(docutils.nodes.literal_block):
            if "python" in block.get("classes", []) and block.parent is section:
                blocks[title] = block.astext() + "\n"
    return blocks


def test_the_readmes_bot_and_test_pass_as_written(tmp_path: pathlib.Path):
    blocks = _python_blocks()
    assert set(blocks) == {"A bot", "A test"}
    bot, test = blocks["A bot"], blocks["A test"]
    assert "..." not in bot + test
    assert len(bot.splitlines()) <= 28 and len(test.splitlines()) <= 20, "the front door stays short"
    assert 'if __name__ == "__main__":' in bot and ".run(" in bot
    # one way to give the bot under test its commands: the bot_factory fixture, as in the testing guide
    assert "def bot_factory" in test and "bot_factory" in (DOCS / "guides" / "testing.rst").read_text()
    (tmp_path / "bot.py").write_text(bot)
    (tmp_path / "test_bot.py").write_text(test)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "test_bot.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    outcomes = dict(re.findall(r"test_bot\.py::(\w+) (PASSED|FAILED|ERROR)", run.stdout))
    defined = re.findall(r"^def (test_\w+)", test, re.MULTILINE)
    assert len(defined) >= 2
    assert outcomes == dict.fromkeys(defined, "PASSED"), run.stdout[-3000:] + run.stderr[-3000:]
    assert run.returncode == 0


def test_the_docs_front_page_includes_the_readmes_front_door():
    readme = README.read_text()
    start, end = FRONT_DOOR
    assert readme.count(start) == 1 and readme.count(end) == 1
    front = readme[readme.index(start) + len(start):readme.index(end)]
    # Relative links would point into the site's build folder, where the sources are not.
    links = list(_doctree(front).findall(docutils.nodes.reference))
    assert links == [], "keep the links out of the part the docs include"
    index = (DOCS / "index.rst").read_text()
    directive = re.search(r"^\.\. include:: \.\./README\.rst\n((?:   :.*\n)+)", index, re.MULTILINE)
    assert directive is not None, "docs/index.rst includes the README's front door"
    assert f":start-after: {start.strip()}" in directive.group(1)
    assert f":end-before: {end.strip()}" in directive.group(1)
