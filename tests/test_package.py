"""Packaging promises: exports, typing marker, docstrings, and the README's two commands."""

from __future__ import annotations

import ast
import pathlib
import re

import service_client

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "service_client"

#: Every public name the documentation says is importable from the top-level package.
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


def test_import_loads_the_transport_stacks_on_first_use_only():
    import subprocess
    import sys

    code = (
        "import sys, warnings\n"
        "import service_client\n"
        "heavy = ('requests', 'urllib3', 'websocket')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
        "with warnings.catch_warnings():\n"
        "    warnings.simplefilter('ignore')\n"
        "    client = service_client.Client(base_url='http://127.0.0.1:9/api/v2', socket_url='http://127.0.0.1:9')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
        "from service_client.gateway import GatewayConnection, FramingError\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
        "client.destroy()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "[]",  # import service_client: none of them
        "['requests', 'urllib3']",  # Client(): the REST session
        "['requests', 'urllib3', 'websocket']",  # the socket (login, or the gateway package's names)
    ]


def test_lazy_package_attributes_resolve_and_unknown_names_raise():
    import service_client.gateway as gateway
    import service_client.rest as rest

    assert rest.RestSession.__name__ == "RestSession" and callable(rest.validate_api_call_args)
    assert gateway.GatewayConnection.__name__ == "GatewayConnection"
    for package in (gateway, rest):
        try:
            package.no_such_name  # noqa: B018
        except AttributeError as exc:
            assert "no_such_name" in str(exc)
        else:
            raise AssertionError("an unknown name must raise AttributeError")


def test_help_of_the_package_names_the_commands_itself_not_a_readme_a_pip_user_lacks():
    doc = service_client.__doc__ or ""
    assert "README" not in doc
    assert "python -m service_client demo" in doc and "python -m service_client emulator" in doc
    assert "pip install 'service_client[emulator]'" in doc


def test_guild_fetch_member_documents_the_404_of_a_non_member():
    doc = service_client.Guild.fetch_member.__doc__ or ""
    assert "ServiceAPIError" in doc and "404" in doc and "not a member" in doc
