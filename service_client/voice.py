"""The old home of the voice manager, now :mod:`service_client.client.voice`.

Kept for one release so that ``from service_client.voice import VoiceManager`` keeps working.
"""

from __future__ import annotations

from .client.voice import VoiceConnection, VoiceManager

__all__ = ["VoiceConnection", "VoiceManager"]
