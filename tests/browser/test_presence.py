"""The emulator's page shows a bot online while its client is connected, and offline after."""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import Demo

pytestmark = pytest.mark.browser


def test_the_running_bot_shows_online_and_offline_once_it_stopped(demo: Demo, open_page: Any) -> None:
    from playwright.sync_api import expect

    page = open_page("alice")
    page.get_by_role("button", name="Demo Server").click()
    bot_id = demo.seed["bot"]["publicId"]
    dot = page.locator(f'#members .member[data-user="{bot_id}"] .dot')
    expect(dot).to_have_class("dot status-online")          # logged in before the page opened
    demo.bot.destroy()
    expect(dot).to_have_class("dot status-offline")         # live: presence:update
