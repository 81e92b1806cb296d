"""Packaging promises: exports, typing marker, docstrings, and the README's two commands."""

from __future__ import annotations

import ast
import pathlib
import re

import service_client

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "service_client"

#: Every public name python-api.md says is importable from the top-level package.
PYTHON_API_NAMES = {
    "Client", "ServiceError", "ServiceAPIError", "RateLimitError", "ServiceAuthError",
    "ServiceTimeoutError", "InsecureHostWarning", "CommandLoadWarning", "User", "Guild",
    "Channel", "DMChannel", "Category", "Member", "Role", "Message", "Invite", "VoiceState",
    "EmbedBuilder", "Permissions", "Collection", "Command", "MISSING",
}


def test_all_is_sorted_complete_and_importable():
    assert service_client.__all__ == sorted(service_client.__all__)
    assert PYTHON_API_NAMES <= set(service_client.__all__)
    for name in service_client.__all__:
        assert getattr(service_client, name) is not None


def test_py_typed_is_shipped():
    assert (PACKAGE / "py.typed").is_file()
    assert "py.typed" in (ROOT / "setup.cfg").read_text()


def _public_definitions(tree: ast.Module):
    """Module-level functions and classes, and the methods of public module-level classes."""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield node
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        yield item


def _is_overload_or_setter(node: ast.AST) -> bool:
    for deco in getattr(node, "decorator_list", []):
        text = ast.unparse(deco)
        if text in ("overload", "typing.overload") or text.endswith(".setter"):
            return True
    return False


def test_every_public_function_and_class_has_a_docstring():
    missing = []
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in _public_definitions(tree):
            if node.name.startswith("_") or _is_overload_or_setter(node):
                continue
            if ast.get_docstring(node) is None:
                missing.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}")
    assert missing == []


def test_readme_commands_and_ci_agree():
    readme = (ROOT / "README.rst").read_text()
    demo = "pip install -e '.[emulator]' && python -m service_client demo"
    tests = "pip install -e '.[emulator,test]' && python -m pytest"
    assert demo in readme and tests in readme
    assert readme.index(demo) < readme.index(tests) < 1200, "the two commands open the README"
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^" + re.escape(tests) + r"\s*$", ci, re.M), ".ci/run runs exactly the test command"


def test_licence_is_isc():
    assert (ROOT / "LICENSE").read_text().startswith("ISC License")
    assert "license_expression = ISC" in (ROOT / "setup.cfg").read_text()  # SPDX
