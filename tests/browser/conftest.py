"""Browser tests of the emulator's web page: Python playwright driving Debian's Chromium.

Playwright's own browser download does not work on these machines, so the tests drive
``/usr/bin/chromium`` through ``executable_path``. When the browser tests are selected
(``python -m pytest -m browser``) and Chromium is missing, the session first tries
``apt-get install -y chromium`` (as root); the tests skip, with the reason printed, only when
that cannot be done. Each test gets a new Chromium with a fresh user-data directory.
"""

from __future__ import annotations

import importlib.util
import os
import pathlib
import shutil
import subprocess
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from service_client import Client
from service_client.emulator import Emulator, seed_demo

CHROMIUM = "/usr/bin/chromium"
SAMPLE_BOT = pathlib.Path(__file__).resolve().parents[2] / "samples" / "ping_bot.py"
#: Without the background-networking flags Chromium's own connections are refused by the closed
#: network of these machines, many at a time.
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]
APT_TIMEOUT_S = 600
#: Bound on each wait for something to appear in the page, milliseconds.
UI_TIMEOUT_MS = 15_000

_chromium_problem: str | None = None


def _install_chromium() -> str | None:
    """Make sure Chromium is at /usr/bin/chromium; return why it cannot be, or None."""
    if os.access(CHROMIUM, os.X_OK):
        return None
    apt = shutil.which("apt-get")
    if apt is None:
        return f"Chromium is not installed at {CHROMIUM} and apt-get is not available to install it"
    if os.geteuid() != 0:
        return f"Chromium is not installed at {CHROMIUM}; run `apt-get install -y chromium` as root"
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    try:
        proc = subprocess.run([apt, "install", "-y", "chromium"], capture_output=True, text=True,
                              timeout=APT_TIMEOUT_S, env=env, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"`apt-get install -y chromium` failed: {exc}"
    if proc.returncode != 0 or not os.access(CHROMIUM, os.X_OK):
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        return f"`apt-get install -y chromium` failed (exit {proc.returncode}): {' / '.join(tail)}"
    return None


def pytest_collection_finish(session: pytest.Session) -> None:
    """Install Chromium once, before any browser test runs (outside every test's timeout)."""
    global _chromium_problem
    if any(item.get_closest_marker("browser") for item in session.items):
        _chromium_problem = _install_chromium()


@pytest.fixture
def launch_chromium(tmp_path: Any) -> Iterator[Callable[..., Any]]:
    """Start a new headless Chromium (fresh user-data directory) with extra command-line flags;
    returns its single browser context. Every one started is closed at teardown."""
    if _chromium_problem is not None:
        pytest.skip(_chromium_problem)
    sync_api = pytest.importorskip("playwright.sync_api",
                                   reason="playwright is not installed: pip install -e '.[emulator,test]'")
    started: list[Any] = []
    with sync_api.sync_playwright() as pw:

        def launch(*flags: str) -> Any:
            context = pw.chromium.launch_persistent_context(
                str(tmp_path / f"chromium-profile-{len(started)}"), executable_path=CHROMIUM, headless=True,
                args=CHROMIUM_FLAGS + list(flags), viewport={"width": 1280, "height": 760},
            )
            started.append(context)
            context.set_default_timeout(UI_TIMEOUT_MS)
            sync_api.expect.set_options(timeout=UI_TIMEOUT_MS)
            return context

        try:
            yield launch
        finally:
            for context in started:
                context.close()


@pytest.fixture
def chromium_context(launch_chromium: Callable[..., Any]) -> Any:
    """A new headless Chromium with a fresh user-data directory; its single browser context."""
    return launch_chromium()


class PageErrors:
    """Uncaught JavaScript errors and console errors of a page, asserted empty at teardown.

    Chromium also logs every non-2xx fetch as a console error ("Failed to load resource"); those
    are the HTTP answers the tests provoke on purpose (403, 404), which the page shows as notices.
    """

    def __init__(self) -> None:
        self.errors: list[str] = []

    def watch(self, page: Any) -> Any:
        page.on("pageerror", lambda exc: self.errors.append(f"page error: {exc}"))
        page.on("console", lambda msg: self.errors.append(f"console {msg.type}: {msg.text}")
                if msg.type == "error" and not msg.text.startswith("Failed to load resource") else None)
        return page


@pytest.fixture
def open_page(chromium_context: Any, emulator: Emulator) -> Iterator[Callable[..., Any]]:
    """Open the emulator's page in a new tab, optionally signed in as a user (by name)."""
    errors = PageErrors()

    def open_(as_user: str | None = None, path: str = "/") -> Any:
        page = errors.watch(chromium_context.new_page())
        page.goto(emulator.page_url.rstrip("/") + path)
        if as_user is not None:
            sign_in(page, as_user)
        return page

    yield open_
    assert errors.errors == [], errors.errors


def sign_in(page: Any, name: str) -> None:
    """Pick ``name`` in the "who are you" drop-down and wait until the socket is connected."""
    from playwright.sync_api import expect

    page.locator("#who").select_option(label=name)
    expect(page.locator("#connection")).to_have_text("connected")


@dataclass
class Demo:
    """The demo world (alice owns Demo Server, pingbot is a member) and the running sample bot."""

    emulator: Emulator
    seed: dict[str, Any]
    bot: Client

    @property
    def server_id(self) -> str:
        return str(self.seed["server"]["publicId"])

    def channel_id(self, name: str) -> str:
        return str(self.seed["channels"][name]["publicId"])


def _load_sample_bot() -> Any:
    """Import ``samples/ping_bot.py`` from the checkout (it is not part of the package)."""
    spec = importlib.util.spec_from_file_location("service_client_browser_sample_bot", SAMPLE_BOT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def demo(emulator: Emulator) -> Iterator[Demo]:
    """The demo world with the sample bot ``samples/ping_bot.py`` logged in as pingbot
    (destroyed at teardown)."""
    from service_client import InsecureHostWarning

    seed = seed_demo(emulator)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InsecureHostWarning)
        bot = _load_sample_bot().build_client(base_url=emulator.base_url, socket_url=emulator.socket_url)
    try:
        bot.login(seed["bot_token"], timeout=15)
        yield Demo(emulator=emulator, seed=seed, bot=bot)
    finally:
        bot.destroy()
