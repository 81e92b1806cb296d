"""A LiveKit-compatible media server for tests: LiveKit's signalling over a WebSocket, WebRTC by aiortc.

It speaks enough of LiveKit's signalling protocol (``livekit-protocol`` protobufs on a WebSocket
at ``/rtc``) for the official SDK to join, publish audio and subscribe:

- a participant joins with an HS256 access token (``?access_token=`` or ``Authorization:
  Bearer``); its identity is the token's ``sub``, a user's public id;
- the join response has ``subscriber_primary`` false, so the client makes the first offer on its
  publisher connection; the server answers with every candidate in the SDP (no trickle out);
- each published audio track is forwarded to every other participant as it came (Opus packets,
  so frames encrypted end to end cross it), its stream labelled ``PA_<participant>|TR_<track>``,
  and decoded on the side: the last 30 s are kept (:class:`.tracks.Recording`);
- a simulated user (a user in the voice channel without a media connection) can speak: its
  microphone (:class:`.tracks.SpeechTrack`) is published like a real one, encoded by aiortc.

It is a fixture, not an SFU: no video, no simulcast, no single-connection mode (``/rtc/v1``
answers 404, and the SDK falls back to ``/rtc``), no TURN or STUN (host candidates only), no
congestion control or retransmission, and what it records of a participant who encrypts end to
end is noise (it has no key).
"""

from __future__ import annotations

import asyncio
import fractions
import itertools
import json
import logging
import re
import secrets
import time
from collections.abc import MutableMapping
from typing import Any
from urllib.parse import parse_qs

import av
from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription
from aiortc.mediastreams import MediaStreamError, MediaStreamTrack
from aiortc.sdp import candidate_from_sdp
from livekit.protocol import models, rtc
from starlette.websockets import WebSocket, WebSocketDisconnect

from ..guard import refuse
from ..journal import finite_number
from .tokens import TokenError, make_token, read_token
from .tracks import (
    MAX_SPEECH_S,
    ForwardTrack,
    Recording,
    SpeechTrack,
    TappedFrame,
    dominant_frequency,
    install_tap,
    mono_samples,
    tone_pcm,
    wav_pcm,
)

__all__ = ["MediaServer", "PING_INTERVAL_S", "PING_TIMEOUT_S"]

logger = logging.getLogger("service_client.emulator.media")

#: Seconds between the client's signalling pings (LiveKit's SDK requires more than 0).
PING_INTERVAL_S = 5
#: Seconds without a ping after which the client gives the signalling connection up.
PING_TIMEOUT_S = 15
#: Bound on waiting for a subscriber's answer to the server's offer, seconds.
ANSWER_TIMEOUT_S = 10.0
#: Participants in one room at most.
MAX_PARTICIPANTS = 50
#: Seconds of each participant's published audio kept.
RECORDING_S = 30.0
#: Largest signalling message accepted, bytes.
MAX_MESSAGE_BYTES = 256 * 1024
_TIME_BASE = fractions.Fraction(1, 48000)
_SERVER_VERSION = "1.9.0"
_PROTOCOL = 15
_sids = itertools.count(1)


def _sid(prefix: str) -> str:
    return f"{prefix}{secrets.token_hex(6)}{next(_sids)}"


def _msid_by_mid(sdp: str) -> dict[str, str]:
    """Each media section's track id (``a=msid:<stream> <track>``) by its ``a=mid``."""
    out: dict[str, str] = {}
    for section in re.split(r"\r?\n(?=m=)", sdp)[1:]:
        mid = re.search(r"^a=mid:(\S+)", section, re.M)
        msid = re.search(r"^a=msid:\S+ (\S+)", section, re.M)
        if mid and msid:
            out[mid.group(1)] = msid.group(1)
    return out


class PublishedTrack:
    """One audio track a participant publishes: read once, recorded, and copied to subscribers."""

    def __init__(self, owner: Participant, info: models.TrackInfo, source: MediaStreamTrack) -> None:
        self.owner = owner
        self.info = info
        self.source = source
        self.forwards: dict[str, ForwardTrack] = {}  # by subscriber identity
        self.recording = Recording(RECORDING_S)
        self.task: asyncio.Task[None] | None = None

    async def pump(self) -> None:
        """Read the source until it ends: record each frame and push it to every subscriber."""
        first: int | None = None
        try:
            while True:
                item = await self.source.recv()
                if isinstance(item, TappedFrame):  # a client's track: forwarded as it came
                    for frame in item.frames:
                        self.recording.add(mono_samples(frame))
                    if first is None:
                        first = item.timestamp
                    packet = av.Packet(item.payload)
                    packet.pts = (item.timestamp - first) & 0xFFFFFFFF
                    packet.time_base = _TIME_BASE
                    for forward in list(self.forwards.values()):
                        forward.push(packet)
                elif isinstance(item, av.AudioFrame):  # a simulated user's speech
                    self.recording.add(mono_samples(item))
                    for forward in list(self.forwards.values()):
                        forward.push(item)
        except MediaStreamError:
            pass
        except Exception:  # a fixture never takes the loop down
            logger.exception("media track %s failed", self.info.sid)

    def stop(self) -> None:
        """Stop reading and end every subscriber's copy."""
        if self.task is not None:
            self.task.cancel()
        self.source.stop()
        for forward in self.forwards.values():
            forward.stop()
        self.forwards.clear()


class Participant:
    """A member of a media room: connected by WebSocket, or simulated (``ws`` None)."""

    def __init__(self, room: MediaRoom, identity: str, name: str, ws: WebSocket | None) -> None:
        self.room = room
        self.identity = identity
        self.name = name
        self.ws = ws
        self.sid = _sid("PA_")
        self.joined_at = int(time.time())
        self.tracks: dict[str, PublishedTrack] = {}
        self.pending: dict[str, models.TrackInfo] = {}  # add_track answers by the client's cid
        self.publisher: RTCPeerConnection | None = None
        self.subscriber: RTCPeerConnection | None = None
        self.microphone: SpeechTrack | None = None
        self._send_lock = asyncio.Lock()  # one signalling frame at a time
        self._negotiate_lock = asyncio.Lock()  # one subscriber offer at a time
        self._answer: asyncio.Future[rtc.SessionDescription] | None = None
        self._offer_ids = itertools.count(1)
        self._tasks: set[asyncio.Task[Any]] = set()
        self.closed = False

    def info(self, state: Any = models.ParticipantInfo.State.ACTIVE) -> models.ParticipantInfo:
        """This participant as LiveKit describes it, with its published tracks."""
        return models.ParticipantInfo(
            sid=self.sid, identity=self.identity, name=self.name, state=state,
            tracks=[t.info for t in self.tracks.values()], joined_at=self.joined_at,
            joined_at_ms=self.joined_at * 1000, version=1, is_publisher=bool(self.tracks),
            permission=models.ParticipantPermission(can_subscribe=True, can_publish=True, can_publish_data=True))

    def spawn(self, coro: Any) -> None:
        """Run ``coro`` as a task owned by this participant (cancelled when it leaves)."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def send(self, response: rtc.SignalResponse) -> None:
        """Send one signalling message; a closed connection drops it."""
        if self.ws is None or self.closed:
            return
        async with self._send_lock:
            try:
                await self.ws.send_bytes(response.SerializeToString())
            except Exception as exc:  # noqa: BLE001 - the peer went away
                logger.debug("media signal to %s dropped: %s", self.identity, exc)

    # ------------------------------------------------------------------ publishing
    async def on_offer(self, offer: rtc.SessionDescription) -> None:
        """The client's offer on its publisher connection: answer it."""
        if self.publisher is None:
            self.publisher = RTCPeerConnection(RTCConfiguration(iceServers=[]))
            pc = self.publisher

            @pc.on("track")
            def on_track(track: MediaStreamTrack) -> None:
                """A participant's new track: forward it (on the media loop)."""
                self.spawn(self._on_track(pc, track))
        tracks = _msid_by_mid(offer.sdp)
        self._msids = getattr(self, "_msids", {})
        self._msids.update(tracks)
        await self.publisher.setRemoteDescription(RTCSessionDescription(sdp=offer.sdp, type="offer"))
        answer = await self.publisher.createAnswer()
        await self.publisher.setLocalDescription(answer)
        await self.send(rtc.SignalResponse(answer=rtc.SessionDescription(
            type="answer", sdp=self.publisher.localDescription.sdp, id=offer.id)))

    async def _on_track(self, pc: RTCPeerConnection, track: MediaStreamTrack) -> None:
        if track.kind != "audio":
            return  # video is not forwarded
        mid = next((t.mid for t in pc.getTransceivers() if t.receiver.track is track), None)
        cid = self._msids.get(mid or "", "")
        info = self.pending.pop(cid, None)
        if info is None:
            info = models.TrackInfo(sid=_sid("TR_"), type=models.TrackType.AUDIO, name="audio",
                                    source=models.TrackSource.MICROPHONE, mime_type="audio/opus")
        info.mid = mid or ""
        await self.room.publish(self, info, track)

    def on_add_track(self, request: rtc.AddTrackRequest) -> rtc.SignalResponse:
        """The client announces a track it is about to publish: give it a ``TR_`` sid."""
        info = models.TrackInfo(sid=_sid("TR_"), type=request.type, name=request.name, muted=request.muted,
                                source=request.source, mime_type="audio/opus", stereo=request.stereo,
                                disable_dtx=request.disable_dtx, encryption=request.encryption)
        self.pending[request.cid] = info
        return rtc.SignalResponse(track_published=rtc.TrackPublishedResponse(cid=request.cid, track=info))

    # ------------------------------------------------------------------ subscribing
    async def subscribe(self, track: PublishedTrack) -> None:
        """Send this participant a copy of ``track`` (a new transceiver, then a new offer)."""
        if self.ws is None or self.closed or self.identity in track.forwards:
            return
        if self.subscriber is None:
            self.subscriber = RTCPeerConnection(RTCConfiguration(iceServers=[]))
        forward = ForwardTrack(track.info.sid)
        track.forwards[self.identity] = forward
        sender = self.subscriber.addTrack(forward)
        sender._stream_id = f"{track.owner.sid}|{track.info.sid}"  # how the SDK tells who speaks
        await self.negotiate()

    async def negotiate(self) -> None:
        """Offer the subscriber connection's current tracks and wait for the answer."""
        async with self._negotiate_lock:
            pc = self.subscriber
            if pc is None or self.closed:
                return
            offer = await pc.createOffer()
            await pc.setLocalDescription(offer)
            self._answer = asyncio.get_running_loop().create_future()
            await self.send(rtc.SignalResponse(offer=rtc.SessionDescription(
                type="offer", sdp=pc.localDescription.sdp, id=next(self._offer_ids))))
            try:
                answer = await asyncio.wait_for(self._answer, ANSWER_TIMEOUT_S)
            except asyncio.TimeoutError:
                logger.warning("media: %s did not answer the subscriber offer", self.identity)
                return
            await pc.setRemoteDescription(RTCSessionDescription(sdp=answer.sdp, type="answer"))

    def on_answer(self, answer: rtc.SessionDescription) -> None:
        """The client's answer to the server's subscriber offer."""
        if self._answer is not None and not self._answer.done():
            self._answer.set_result(answer)

    async def on_trickle(self, trickle: rtc.TrickleRequest) -> None:
        """A candidate of the client's: add it to the connection it names."""
        pc = self.subscriber if trickle.target == rtc.SignalTarget.SUBSCRIBER else self.publisher
        try:
            init = json.loads(trickle.candidateInit)
        except ValueError:
            return
        text = init.get("candidate") if isinstance(init, dict) else None
        if pc is None or not isinstance(text, str) or not text:
            return
        try:
            candidate = candidate_from_sdp(text.split(":", 1)[1] if text.startswith("candidate:") else text)
        except (ValueError, IndexError):
            return
        candidate.sdpMid = init.get("sdpMid")
        candidate.sdpMLineIndex = init.get("sdpMLineIndex")
        try:
            await pc.addIceCandidate(candidate)
        except Exception as exc:  # noqa: BLE001 - a candidate aiortc cannot use
            logger.debug("media: candidate of %s ignored: %s", self.identity, exc)

    async def close(self) -> None:
        """Close both connections and stop this participant's tasks."""
        self.closed = True
        for task in list(self._tasks):
            task.cancel()
        for pc in (self.publisher, self.subscriber):
            if pc is not None:
                try:
                    await asyncio.wait_for(pc.close(), 2.0)
                except Exception as exc:  # noqa: BLE001 - closing anyway
                    logger.debug("media: closing a connection of %s: %s", self.identity, exc)
        if self.microphone is not None:
            self.microphone.stop()


class MediaRoom:
    """The participants of one voice channel's media."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.sid = _sid("RM_")
        self.created = int(time.time())
        self.participants: dict[str, Participant] = {}  # by identity
        self.recordings: dict[str, Recording] = {}  # by identity: the last track each published

    def others(self, participant: Participant) -> list[Participant]:
        """Every participant but ``participant``."""
        return [p for p in self.participants.values() if p is not participant]

    async def publish(self, owner: Participant, info: models.TrackInfo, source: MediaStreamTrack) -> PublishedTrack:
        """Make ``source`` a track of ``owner``: tell the others, then send each a copy."""
        track = PublishedTrack(owner, info, source)
        owner.tracks[info.sid] = track
        self.recordings[owner.identity] = track.recording
        track.task = asyncio.ensure_future(track.pump())
        await self.broadcast_update(owner)
        for other in self.others(owner):
            other.spawn(other.subscribe(track))
        return track

    async def broadcast_update(self, participant: Participant,
                               state: Any = models.ParticipantInfo.State.ACTIVE) -> None:
        """Send every other participant ``participant``'s current description."""
        update = rtc.SignalResponse(update=rtc.ParticipantUpdate(participants=[participant.info(state)]))
        for other in self.others(participant):
            await other.send(update)

    async def remove(self, participant: Participant) -> None:
        """Take ``participant`` out: its tracks end, the others are told, its connections close."""
        if self.participants.get(participant.identity) is not participant:
            return
        del self.participants[participant.identity]
        for track in participant.tracks.values():
            track.stop()
        for other in self.participants.values():
            for track in other.tracks.values():
                forward = track.forwards.pop(participant.identity, None)
                if forward is not None:
                    forward.stop()
        await self.broadcast_update(participant, models.ParticipantInfo.State.DISCONNECTED)
        await participant.close()


class MediaServer:
    """The emulator's media server: rooms by voice channel id, tokens, and the ``/rtc`` WebSocket.

    Not thread-safe: it runs on the emulator's loop.

    Args:
        api_key: The ``iss`` of the tokens it makes.
        secret: The HS256 key of its tokens (default: random).
    """

    def __init__(self, *, api_key: str = "emulator", secret: bytes | None = None) -> None:
        install_tap()
        self.api_key = api_key
        self.secret = secret if secret is not None else secrets.token_bytes(32)
        self.rooms: dict[str, MediaRoom] = {}

    def token(self, identity: str, room: str, *, name: str = "") -> str:
        """An access token letting user ``identity`` join room ``room`` (a voice channel id)."""
        return make_token(self.secret, self.api_key, identity, room, name=name)

    def room(self, name: str) -> MediaRoom:
        """The room of a voice channel, created on first use."""
        if name not in self.rooms:
            self.rooms[name] = MediaRoom(name)
        return self.rooms[name]

    def participants(self, room: str) -> list[str]:
        """The identities in a room, media connections and simulated speakers alike."""
        found = self.rooms.get(room)
        return list(found.participants) if found is not None else []

    def recording(self, room: str, identity: str) -> Recording | None:
        """What ``identity`` last published in ``room``, or None."""
        found = self.rooms.get(room)
        return found.recordings.get(identity) if found is not None else None

    async def speak(self, room: str, identity: str, pcm: bytes, *, name: str = "") -> float:
        """Make ``identity`` say 48 kHz mono 16-bit ``pcm`` in ``room``.

        A user without a media connection gets a simulated one (joined, its microphone
        published to everyone). Returns the seconds of speech now queued.
        """
        target = self.room(room)
        participant = target.participants.get(identity)
        if participant is None:
            participant = Participant(target, identity, name, None)
            target.participants[identity] = participant
        if participant.microphone is None:
            if participant.ws is not None:
                raise ValueError("that user has its own media connection: it speaks through it")
            participant.microphone = SpeechTrack(_sid("TR_"))
            info = models.TrackInfo(sid=participant.microphone.id, type=models.TrackType.AUDIO, name="microphone",
                                    source=models.TrackSource.MICROPHONE, mime_type="audio/opus")
            await target.publish(participant, info, participant.microphone)
        return participant.microphone.say(pcm)

    @staticmethod
    def frequency(pcm: bytes) -> float:
        """The dominant frequency of 48 kHz mono 16-bit PCM, Hz (:func:`.tracks.dominant_frequency`)."""
        return dominant_frequency(pcm)

    async def say(self, room: str, identity: str, *, tone_hz: Any = None, seconds: Any = 1.0,
                  wav: bytes | None = None, name: str = "") -> float:
        """Make ``identity`` say a sine tone of ``tone_hz`` for ``seconds``, or a WAV file's audio
        (:meth:`speak`). Returns the seconds of speech now queued.

        Raises:
            TypeError, ValueError: A tone or duration that is not a number in range, or a file
                PyAV cannot read.
        """
        if wav is not None:
            pcm = wav_pcm(wav)
        else:
            pcm = tone_pcm(finite_number(tone_hz, "toneHz", 20.0, 20000.0),
                           finite_number(seconds, "seconds", 0.02, MAX_SPEECH_S))
        return await self.speak(room, identity, pcm, name=name)

    async def leave(self, room: str, identity: str) -> bool:
        """Take ``identity`` out of ``room`` (its media connection closes). False if absent."""
        found = self.rooms.get(room)
        participant = found.participants.get(identity) if found is not None else None
        if found is None or participant is None:
            return False
        ws = participant.ws
        await found.remove(participant)
        if ws is not None:
            try:
                await participant_leave(ws)
            except Exception as exc:  # noqa: BLE001 - already gone
                logger.debug("media: leave to %s not sent: %s", identity, exc)
        if not found.participants:
            self.rooms.pop(room, None)
        return True

    async def close(self) -> None:
        """Close every room."""
        for name in list(self.rooms):
            for identity in list(self.rooms[name].participants):
                await self.leave(name, identity)

    # ------------------------------------------------------------------ the WebSocket
    async def serve(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        """Answer a WebSocket upgrade at ``/rtc`` (``/rtc/v1`` and the rest: 404)."""
        path = scope.get("path", "").rstrip("/")
        if path != "/rtc":
            await refuse(scope, receive, send, 404, "no such media endpoint (this server has /rtc only)")
            return
        query = parse_qs((scope.get("query_string") or b"").decode("latin-1"))
        token = (query.get("access_token") or [""])[0]
        for key, value in scope.get("headers", []):
            if key.lower() == b"authorization" and value[:7].lower() == b"bearer ":
                token = value[7:].decode("latin-1").strip()
        try:
            claims = read_token(self.secret, token)
        except TokenError as exc:
            await refuse(scope, receive, send, 401, f"invalid access token: {exc}")
            return
        room = self.room(claims["video"]["room"])
        if len(room.participants) >= MAX_PARTICIPANTS:
            await refuse(scope, receive, send, 429, "the room is full")
            return
        ws = WebSocket(scope, receive, send)
        await ws.accept()
        old = room.participants.get(claims["sub"])
        if old is not None:  # the same identity again: the newer connection wins
            await self.leave(room.name, old.identity)
            room = self.room(claims["video"]["room"])
        participant = Participant(room, claims["sub"], str(claims.get("name") or ""), ws)
        room.participants[participant.identity] = participant
        try:
            await participant.send(self._join_response(room, participant))
            for other in room.others(participant):
                for track in other.tracks.values():
                    participant.spawn(participant.subscribe(track))
            await room.broadcast_update(participant)
            await self._read(participant)
        finally:
            if room.participants.get(participant.identity) is participant:
                await room.remove(participant)
                if not room.participants:
                    self.rooms.pop(room.name, None)

    def _join_response(self, room: MediaRoom, participant: Participant) -> rtc.SignalResponse:
        return rtc.SignalResponse(join=rtc.JoinResponse(
            room=models.Room(sid=room.sid, name=room.name, creation_time=room.created, max_participants=MAX_PARTICIPANTS),
            participant=participant.info(), other_participants=[p.info() for p in room.others(participant)],
            server_version=_SERVER_VERSION, subscriber_primary=False,
            ping_interval=PING_INTERVAL_S, ping_timeout=PING_TIMEOUT_S,
            server_info=models.ServerInfo(edition=models.ServerInfo.Edition.Standard, version=_SERVER_VERSION,
                                          protocol=_PROTOCOL, node_id="emulator")))

    async def _read(self, participant: Participant) -> None:
        ws = participant.ws
        assert ws is not None
        while True:
            try:
                message = await ws.receive()
            except (WebSocketDisconnect, RuntimeError):
                return
            if message.get("type") == "websocket.disconnect":
                return
            data = message.get("bytes")
            if not data or len(data) > MAX_MESSAGE_BYTES:
                continue
            request = rtc.SignalRequest()
            try:
                request.ParseFromString(data)
            except Exception:  # noqa: BLE001 - a frame that is not a SignalRequest
                continue
            kind = request.WhichOneof("message")
            try:
                if await self._handle(participant, kind, request):
                    return
            except Exception:  # a fixture logs and goes on
                logger.exception("media: %s from %s failed", kind, participant.identity)

    async def _handle(self, participant: Participant, kind: str | None, request: rtc.SignalRequest) -> bool:
        """Act on one request; True when the participant leaves."""
        if kind == "offer":
            await participant.on_offer(request.offer)
        elif kind == "answer":
            participant.on_answer(request.answer)
        elif kind == "trickle":
            await participant.on_trickle(request.trickle)
        elif kind == "add_track":
            await participant.send(participant.on_add_track(request.add_track))
        elif kind == "mute":
            for track in participant.tracks.values():
                if track.info.sid == request.mute.sid:
                    track.info.muted = request.mute.muted
            await participant.room.broadcast_update(participant)
        elif kind == "ping":
            await participant.send(rtc.SignalResponse(pong=request.ping))
        elif kind == "ping_req":
            await participant.send(rtc.SignalResponse(pong_resp=rtc.Pong(
                last_ping_timestamp=request.ping_req.timestamp, timestamp=int(time.time() * 1000))))
        elif kind == "leave":
            return True
        return False


async def participant_leave(ws: WebSocket) -> None:
    """Tell a connected client the server removed it, then close its WebSocket."""
    await ws.send_bytes(rtc.SignalResponse(leave=rtc.LeaveRequest(
        can_reconnect=False, reason=models.DisconnectReason.PARTICIPANT_REMOVED)).SerializeToString())
    await ws.close()
