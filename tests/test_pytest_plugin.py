"""The pytest plugin that ships with the package gives bot authors a clean emulator per test."""

from __future__ import annotations

import requests


def test_plugin_fixture_is_a_running_reset_emulator(service_emulator):
    created = service_emulator.create_user("plugin-user")
    me = requests.get(
        service_emulator.base_url + "/auth/me",
        headers={"Authorization": f"Bearer {created['token']}"},
        timeout=10,
    )
    assert me.status_code == 200
    assert me.json()["user"]["publicId"] == created["user"]["publicId"]


def test_plugin_fixture_resets_between_tests(service_emulator):
    assert service_emulator.requests() == []
