"""Voice media: playing and hearing audio in a voice channel through LiveKit's SDK.

Layer L1. Needs the voice extra (``pip install 'service_client[voice]'``: ``livekit``, ``av``,
``numpy``), imported on first use: ``import service_client`` loads none of them. The client's
voice signalling (``client.voice.join``) connects a :class:`~.session.MediaSession` with the
credentials the service sends; ``VoiceConnection.play`` and ``record`` use it.
"""

from __future__ import annotations

from .frames import AudioFrame
from .playback import AudioPlayback
from .recorder import AudioRecorder

__all__ = ["AudioFrame", "AudioPlayback", "AudioRecorder"]
