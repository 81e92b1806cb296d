"""reset() restores every setting to its default, voice credentials included."""

from __future__ import annotations

import requests


def test_reset_restores_voice_settings(emulator):
    defaults = (emulator.core.rt.voice_url, emulator.core.rt.voice_e2ee_key)
    r = requests.post(
        emulator.control_url + "/settings",
        json={"voiceUrl": "wss://media.example/lk", "voiceE2eeKey": "a2V5"},
        timeout=10,
    )
    assert r.status_code == 204
    assert (emulator.core.rt.voice_url, emulator.core.rt.voice_e2ee_key) == ("wss://media.example/lk", "a2V5")
    emulator.reset()
    assert (emulator.core.rt.voice_url, emulator.core.rt.voice_e2ee_key) == defaults
