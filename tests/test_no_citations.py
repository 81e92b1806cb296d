"""Docstrings, comments, the README, the docs site, the samples and the benchmarks stand on their own.

Users of service_client have neither our internal design notes nor our issue tracker, so nothing they
read may cite them: no design-note file names, no "protocol 5.2"-style section numbers, no "pitfall 31"
or "issue 4", no "Spec: Limits" labels or mentions of "the spec", no endpoint labels such as "C14" or
"EXT", no path to the notes' directory. Each citation is replaced by what it meant, or by a pointer to
a page of ``docs/``.

One test per file, so a failure names the file; its message lists ``file:line: text`` for every hit.
In Python files only comments and string literals (docstrings included) are read: code names such as
a parameter ``spec: OverwriteSpec`` are not prose.
"""

from __future__ import annotations

import io
import pathlib
import re
import tokenize

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent

#: What users read: the package, the README, the docs site, the samples and the benchmarks.
SCANNED = ["service_client", "README.rst", "docs", "samples", "benchmarks"]

#: Generated or cached trees that are not ours to word.
SKIPPED_DIRS = {"_build", "__pycache__", ".ipynb_checkpoints", ".mypy_cache", ".pytest_cache", ".ruff_cache"}

#: Files made of text that a person reads (binary files such as images are skipped).
TEXT_SUFFIXES = {".py", ".pyi", ".rst", ".md", ".txt", ".ipynb", ".html", ".js", ".css", ".toml", ".cfg", ".json"}

#: Each kind of citation and the pattern that finds it. Patterns are tuned against the prose and the
#: example data of this repository: an endpoint label is ``C`` plus one or two digits standing alone,
#: never part of a path (``/chat/C1``), a quoted id (``"C1"``) or a percent escape (``%C3``); a
#: section number cited from an RFC (``RFC 6455 section 5.2``) is a public reference, not ours.
PATTERNS: dict[str, re.Pattern[str]] = {
    "design-note file": re.compile(r"python-api|protocol\.md|socketio-framing|STYLE\.md", re.IGNORECASE),
    "shared-docs path": re.compile(r"/work/shared|\.\./shared\b|\bshared (?:docs?|design|notes?|spec)\b", re.IGNORECASE),
    "section number": re.compile(
        r"(?<!IO )\bprotocol\s+(?:section\s+)?\d+(?:\.\d+)*\b|(?<!RFC \d{4} )\bsections?\s+\d+(?:\.\d+)*\b|§\s*\d",
        re.IGNORECASE,
    ),
    "pitfall number": re.compile(r"\bpitfalls?\s*#?\d+", re.IGNORECASE),
    "issue number": re.compile(r"\bissues?\s*#?\d+\b|\bissues/\d+", re.IGNORECASE),
    "spec citation": re.compile(r"\bspec\b", re.IGNORECASE),
    "endpoint label": re.compile(r"(?<![\w/\"'`=%#.-])C\d{1,2}\b(?![/\"'`])"),
    "route-class label": re.compile(r"\b(?:EXT|CORE)\b"),
}

#: Lines that match a pattern without citing anything: (file, text the line contains, why).
#: Keep this short; prefer rewording the line.
ALLOWED: list[tuple[str, str, str]] = []


def _scanned_files() -> list[pathlib.Path]:
    files: list[pathlib.Path] = []
    for name in SCANNED:
        top = ROOT / name
        candidates = [top] if top.is_file() else sorted(top.rglob("*"))
        for path in candidates:
            relative = path.relative_to(ROOT)
            if any(part in SKIPPED_DIRS or part.endswith(".egg-info") for part in relative.parts):
                continue
            if path.is_file() and path.suffix in TEXT_SUFFIXES:
                files.append(path)
    return files


def _prose(path: pathlib.Path) -> list[tuple[int, str]]:
    """``(line number, text)`` for every stretch of ``path`` a person reads as prose.

    For Python that is each comment and string literal (one entry per physical line of it); for
    every other file, each line.
    """
    text = path.read_text(encoding="utf-8")
    if path.suffix not in {".py", ".pyi"}:
        return list(enumerate(text.splitlines(), 1))
    prose_kinds = {tokenize.COMMENT, tokenize.STRING}
    if hasattr(tokenize, "FSTRING_MIDDLE"):  # Python 3.12+: f-strings are split into parts
        prose_kinds.add(tokenize.FSTRING_MIDDLE)
    out: list[tuple[int, str]] = []
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type in prose_kinds:
            for offset, line in enumerate(token.string.splitlines()):
                out.append((token.start[0] + offset, line))
    return out


def _hits(path: pathlib.Path) -> list[str]:
    relative = path.relative_to(ROOT).as_posix()
    allowed = [snippet for file, snippet, _why in ALLOWED if file == relative]
    found: list[str] = []
    for number, line in _prose(path):
        kinds = [kind for kind, pattern in PATTERNS.items() if pattern.search(line)]
        if kinds and not any(snippet in line for snippet in allowed):
            found.append(f"{relative}:{number}: [{', '.join(kinds)}] {line.strip()}")
    return found


FILES = _scanned_files()


def test_the_scan_covers_every_kind_of_page():
    names = {path.relative_to(ROOT).as_posix() for path in FILES}
    assert "README.rst" in names
    assert "service_client/client/lifecycle.py" in names
    assert any(name.startswith("docs/guides/") for name in names)
    assert any(name.startswith("samples/") for name in names)
    assert any(name.startswith("benchmarks/") for name in names)
    assert not any("/_build/" in name for name in names)


@pytest.mark.parametrize(
    "line, kind",
    [
        ("Spec: Limits, Backoff.", "spec citation"),
        ("(spec: Authentication 5)", "spec citation"),
        ("see python-api.md section 4", "design-note file"),
        ("as protocol.md says", "design-note file"),
        ("never purges (protocol 5.2)", "section number"),
        ("always sends all=true (pitfall 31)", "pitfall number"),
        ("(issue 4 benchmark)", "issue number"),
        ("``DELETE /invites/{code}``, C14)", "endpoint label"),
        ("(C5) concurrently", "endpoint label"),
        ("``GET /servers/{sid}/invites``, EXT", "route-class label"),
        ("read /work/shared/protocol.md", "shared-docs path"),
        ("the shared docs say", "shared-docs path"),
    ],
)
def test_each_pattern_finds_its_citation(line: str, kind: str):
    assert PATTERNS[kind].search(line), f"{kind!r} misses {line!r}"


@pytest.mark.parametrize(
    "line",
    [
        'client.send_message("C1", "hi")',
        "``GET /chat/C1?limit=50`` gives ``GET:chat/C1``",
        '("é€", "%C3%A9%E2%82%AC")',
        "to issue a request, call api_call",
        "a RedisBucketStore on a shared Redis",
        "timings are noisy on a shared machine",
        "speaks the Engine.IO protocol 4 framing",
        "the shared end-to-end encryption key",
        "frame headers (RFC 6455 section 5.2: server frames unmasked)",
    ],
)
def test_ordinary_prose_and_example_ids_are_not_citations(line: str):
    assert [kind for kind, pattern in PATTERNS.items() if pattern.search(line)] == []


def test_python_code_names_are_not_prose_but_comments_and_docstrings_are(tmp_path: pathlib.Path):
    module = tmp_path / "module.py"
    module.write_text(
        'def post(scope_id: str, spec: OverwriteSpec) -> None:\n'
        '    """Post one overwrite.\n\n    Spec: Resources.\n    """\n'
        '    send("C1")  # never purges (protocol 5.2)\n'
    )
    prose = _prose(module)
    assert (4, "    Spec: Resources.") in prose
    assert (6, "# never purges (protocol 5.2)") in prose
    assert not any("OverwriteSpec" in text for _line, text in prose)


@pytest.mark.parametrize("path", FILES, ids=[path.relative_to(ROOT).as_posix() for path in FILES])
def test_no_citation_of_material_users_do_not_have(path: pathlib.Path):
    hits = _hits(path)
    assert hits == [], "say what is meant, or point to a page of docs/:\n" + "\n".join(hits)
