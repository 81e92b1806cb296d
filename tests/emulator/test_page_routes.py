"""The web page's HTTP side: its files, the user list it picks from, and the vendored socket.io client.

The page itself is tested in a real browser (``tests/browser``, ``-m browser``).
"""

from __future__ import annotations

import configparser
import fnmatch
import hashlib
import pathlib
import re

import requests

from service_client.emulator import Emulator
from service_client.emulator.webui import PAGE_FILES

ROOT = pathlib.Path(__file__).resolve().parents[2]
STATIC = ROOT / "service_client" / "emulator" / "static"


def _get(emulator: Emulator, path: str) -> requests.Response:
    return requests.get(emulator.page_url.rstrip("/") + path, timeout=10)


def test_the_page_is_served_at_the_root_and_under_the_control_prefix(emulator):
    root, ui = _get(emulator, "/"), _get(emulator, "/_emulator/ui")
    for response in (root, ui):
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/html; charset=utf-8"
        assert "default-src 'self'" in response.headers["content-security-policy"]
        assert response.headers["x-content-type-options"] == "nosniff"
    assert root.content == ui.content
    # everything it loads comes from the emulator itself: no CDN, no other host
    sources = re.findall(r'(?:src|href)="([^"]+)"', root.text)
    assert sources and all(s.startswith("/_emulator/ui/") or s == "data:," for s in sources), sources
    for source in sources:
        if source.startswith("/"):
            assert _get(emulator, source).status_code == 200, source


def test_assets_have_their_content_types_and_nothing_else_is_served(emulator):
    assert _get(emulator, "/_emulator/ui/app.js").headers["content-type"] == "text/javascript; charset=utf-8"
    assert _get(emulator, "/_emulator/ui/style.css").headers["content-type"] == "text/css; charset=utf-8"
    assert _get(emulator, "/_emulator/ui/socket.io-client.LICENSE").text.startswith("The MIT License")
    for path in ("/_emulator/ui/nothing.js", "/_emulator/ui/..%2Fcontrol.py", "/_emulator/ui/vendor%2FVENDORED.txt",
                 "/index.html", "/_emulator/ui/app.js/x"):
        response = _get(emulator, path)
        assert response.status_code == 404, path
        assert response.json() == {"error": "Not found"}
    assert requests.post(emulator.page_url, timeout=10).status_code == 405


def test_the_user_list_gives_every_user_and_token_and_drops_revoked_tokens(emulator):
    alice = emulator.create_user("alice")
    bot = emulator.create_user("pingbot", bot=True)
    listed = requests.get(emulator.control_url + "/users", timeout=10).json()["users"]
    assert [(u["user"]["publicId"], u["token"]) for u in listed] == [
        (alice["user"]["publicId"], alice["token"]), (bot["user"]["publicId"], bot["token"])]
    assert listed[1]["user"]["isBot"] is True
    emulator.revoke_token(alice["user"]["publicId"])
    assert emulator.users()[0] == {"user": emulator.user(alice["user"]["publicId"]), "token": None}
    # the listed token is the one the service accepts
    me = requests.get(emulator.base_url + "/auth/me", timeout=10,
                      headers={"Authorization": "Bearer " + emulator.users()[1]["token"]})
    assert me.json()["user"]["name"] == "pingbot"


def test_the_vendored_socket_io_client_is_the_pinned_build_with_its_licence():
    notes = (STATIC / "vendor" / "VENDORED.txt").read_text()
    version = re.search(r"socket\.io-client (\d+\.\d+\.\d+)", notes)
    digest = re.search(r"sha256:\s+([0-9a-f]{64})\s+socket\.io\.min\.js", notes)
    assert version and digest, notes
    build = (STATIC / "vendor" / "socket.io.min.js").read_bytes()
    assert hashlib.sha256(build).hexdigest() == digest.group(1)
    assert build.startswith(f"/*!\n * Socket.IO v{version.group(1)}\n".encode())
    assert "MIT" in notes
    assert (STATIC / "vendor" / "socket.io-client.LICENSE").read_text().startswith("The MIT License")


def test_every_page_file_is_package_data():
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    assert config["options"]["packages"].strip() == "find_namespace:"  # data folders are packages too
    for relative, _type in PAGE_FILES.values():
        assert (STATIC / relative).is_file(), relative
        folder, _, name = ("static/" + relative).rpartition("/")
        patterns = config["options.package_data"]["service_client.emulator." + folder.replace("/", ".")].split()
        assert any(fnmatch.fnmatch(name, p) for p in patterns), relative
