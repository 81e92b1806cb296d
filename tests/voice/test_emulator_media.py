"""The emulator's media server without WebRTC: tokens, the signalling endpoint's refusals, the
control routes of speech and recording (the default suite; skipped without the voice extra)."""

from __future__ import annotations

import base64
import time
from collections.abc import Iterator

import pytest
import requests
import websocket

from service_client.emulator import Emulator
from service_client.emulator.media import media_available
from service_client.emulator.media.tokens import TokenError, make_token, read_token

SECRET = b"k" * 32


def test_a_token_round_trips_and_a_bad_one_is_refused() -> None:
    token = make_token(SECRET, "emulator", "u1", "room1", name="alice", now=1000.0)
    claims = read_token(SECRET, token, now=1001.0)
    assert (claims["sub"], claims["name"], claims["video"]["room"], claims["video"]["roomJoin"]) == \
        ("u1", "alice", "room1", True)
    with pytest.raises(TokenError, match="bad signature"):
        read_token(b"x" * 32, token, now=1001.0)
    with pytest.raises(TokenError, match="expired"):
        read_token(SECRET, token, now=1000.0 + 7 * 3600)
    with pytest.raises(TokenError, match="not a JWT"):
        read_token(SECRET, "opaque")
    head, body, sig = token.split(".")
    forged = base64.urlsafe_b64encode(b'{"alg":"none"}').rstrip(b"=").decode() + "." + body + "." + sig
    with pytest.raises(TokenError):
        read_token(SECRET, forged, now=1001.0)


@pytest.fixture(scope="module")
def media_emu() -> Iterator[Emulator]:
    if not media_available():
        pytest.skip("the voice extra is not installed: pip install -e '.[emulator,voice]'")
    emu = Emulator(media=True)
    emu.start()
    try:
        yield emu
    finally:
        emu.stop(timeout=10.0)


def _status(url: str, **options: object) -> int:
    try:
        websocket.create_connection(url, timeout=5, **options).close()
    except websocket.WebSocketBadStatusException as exc:
        return int(exc.status_code)
    return 101


def test_the_signalling_endpoint_refuses_bad_tokens_and_the_single_connection_path(media_emu: Emulator) -> None:
    root = f"ws://127.0.0.1:{media_emu.port}"
    assert _status(root + "/rtc?access_token=nope") == 401
    assert _status(root + "/rtc", header=["Authorization: Bearer nope"]) == 401
    assert _status(root + "/rtc/v1?access_token=nope") == 404


def test_a_user_joining_voice_gets_a_token_for_its_own_identity(media_emu: Emulator) -> None:
    media_emu.reset()
    human = media_emu.create_user("alice")
    created = media_emu.create_server("S", human["user"]["publicId"], channels=[{"name": "v", "type": "VOICE"}])
    channel = next(c["publicId"] for c in created["channels"] if c["type"] == "VOICE")
    from service_client import Client

    client = Client(base_url=media_emu.base_url, socket_url=media_emu.socket_url)
    try:
        client.login(human["token"], timeout=15)
        connection = client.voice.join(channel, timeout=5, media=False)
        assert connection.url == f"ws://127.0.0.1:{media_emu.port}"
        secret = media_emu.core.rt.media.secret
        claims = read_token(secret, connection.token)
        assert (claims["sub"], claims["video"]["room"]) == (human["user"]["publicId"], channel)
    finally:
        client.destroy()


def test_speech_and_recording_over_the_control_plane(media_emu: Emulator) -> None:
    media_emu.reset()
    human = media_emu.create_user("alice")
    created = media_emu.create_server("S", human["user"]["publicId"], channels=[{"name": "v", "type": "VOICE"}])
    uid = human["user"]["publicId"]
    channel = next(c["publicId"] for c in created["channels"] if c["type"] == "VOICE")
    url = media_emu.control_url
    answer = requests.post(url + "/voice/speak", json={"userId": uid, "channelId": channel, "toneHz": 440}, timeout=10)
    assert answer.status_code == 400 and "not in that voice channel" in answer.json()["error"]
    assert media_emu.voice_join(uid, channel)
    for bad in ({"toneHz": 5}, {"toneHz": "loud"}, {"toneHz": 440, "seconds": 1e9}, {"wavBase64": "%%%"},
                {"wavBase64": base64.b64encode(b"not audio").decode()}):
        answer = requests.post(url + "/voice/speak", json={"userId": uid, "channelId": channel, **bad}, timeout=10)
        assert answer.status_code == 400, (bad, answer.text)
    answer = requests.post(url + "/voice/speak", json={"userId": uid, "channelId": channel, "toneHz": 440,
                                                       "seconds": 1}, timeout=10)
    assert answer.status_code == 200 and answer.json()["queuedSeconds"] == pytest.approx(1.0, abs=0.05)
    assert media_emu.media_participants(channel) == [uid]
    deadline = time.monotonic() + 5
    while media_emu.voice_frequency(channel, uid) == 0.0:  # the simulated microphone plays in real time
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert media_emu.voice_frequency(channel, uid) == pytest.approx(440, abs=10)
    answer = requests.post(url + "/voice/recording", json={"channelId": channel, "userId": uid}, timeout=10)
    assert answer.status_code == 200 and answer.headers["content-type"] == "audio/wav"
    assert answer.content[:4] == b"RIFF"
    answer = requests.post(url + "/voice/recording", json={"channelId": channel, "userId": "nobody"}, timeout=10)
    assert answer.status_code == 404
    media_emu.voice_leave(uid)
    assert media_emu.media_participants(channel) == []


def test_without_the_media_server_the_routes_answer_501(emulator: Emulator) -> None:
    answer = requests.post(emulator.control_url + "/voice/recording", json={"channelId": "c", "userId": "u"},
                           timeout=10)
    assert answer.status_code == 501 and "service_client[voice]" in answer.json()["error"]
    assert _status(f"ws://127.0.0.1:{emulator.port}/rtc?access_token=x") == 404
