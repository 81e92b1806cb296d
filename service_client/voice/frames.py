"""Audio values of the voice media that need no media library: :class:`AudioFrame`."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["AudioFrame"]


@dataclass(frozen=True, slots=True)
class AudioFrame:
    """A piece of one speaker's decoded audio, as the ``audio_frame`` event hands it on.

    Attributes:
        user_id: The speaker's user id (its media identity).
        samples: 16-bit signed little-endian PCM, channels interleaved.
        sample_rate: Samples per second per channel, Hz (48000).
        channels: 1 (mono) or 2.
    """

    user_id: str
    samples: bytes
    sample_rate: int
    channels: int

    @property
    def samples_per_channel(self) -> int:
        """How many samples each channel holds."""
        return len(self.samples) // (2 * self.channels)

    @property
    def duration(self) -> float:
        """The frame's length, seconds (0.02 for the media's 20 ms frames)."""
        return self.samples_per_channel / self.sample_rate

    def __repr__(self) -> str:
        return (f"<AudioFrame user_id={self.user_id!r} {self.samples_per_channel} samples "
                f"{self.sample_rate} Hz x{self.channels}>")
