"""Writing what each speaker says to WAV files: :class:`AudioRecorder`."""

from __future__ import annotations

import os
import pathlib
import re
import threading
import wave
from typing import Any

from .frames import AudioFrame

__all__ = ["AudioRecorder"]


class AudioRecorder:
    """One WAV file per speaker (48 kHz, 16-bit, the received channel count) until :meth:`stop`.

    Made by :meth:`VoiceConnection.record`. Thread-safe. Leaving the channel stops it.

    Args:
        target: A directory (created if missing): files ``<dir>/<user id>.wav``; or a path
            ending in ``.wav``: files ``<stem>-<user id>.wav`` beside it.

    Raises:
        TypeError: ``target`` is not a str or ``os.PathLike``.
        ValueError: Empty, or an existing file that is not a directory.
    """

    def __init__(self, target: Any) -> None:
        if not isinstance(target, (str, os.PathLike)):
            raise TypeError(f"record() needs a directory or a .wav path, got {type(target).__name__}")
        path = pathlib.Path(os.fspath(target))
        if not str(path):
            raise ValueError("record() needs a non-empty path")
        if path.suffix.lower() == ".wav":
            self._directory, self._stem = path.parent, path.stem + "-"
        else:
            if path.exists() and not path.is_dir():
                raise ValueError(f"{str(path)!r} is a file: give a directory or a path ending in .wav")
            self._directory, self._stem = path, ""
        self._directory.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()  # guards _writers, _files, _stopped and the open files
        self._writers: dict[str, wave.Wave_write] = {}
        self._files: dict[str, pathlib.Path] = {}
        self._stopped = False

    @property
    def files(self) -> dict[str, pathlib.Path]:
        """The file of each speaker heard so far, by user id."""
        with self._lock:
            return dict(self._files)

    @property
    def recording(self) -> bool:
        """False once stopped."""
        return not self._stopped

    def write(self, frame: AudioFrame) -> None:
        """Append a frame to its speaker's file (opened on the speaker's first frame)."""
        with self._lock:
            if self._stopped:
                return
            writer = self._writers.get(frame.user_id)
            if writer is None:
                name = re.sub(r"[^A-Za-z0-9_.-]", "_", frame.user_id) or "speaker"
                path = self._directory / f"{self._stem}{name}.wav"
                writer = wave.open(str(path), "wb")
                writer.setnchannels(frame.channels)
                writer.setsampwidth(2)
                writer.setframerate(frame.sample_rate)
                self._writers[frame.user_id] = writer
                self._files[frame.user_id] = path
            # Under the lock so that stop() never closes a file mid-write (a local append of
            # 2 KB; the lock guards this recorder's files only).
            writer.writeframesraw(frame.samples)

    def stop(self) -> dict[str, pathlib.Path]:
        """Stop and close every file (their headers completed). Idempotent.

        Returns:
            The file of each speaker, by user id.
        """
        with self._lock:
            self._stopped = True
            writers, self._writers = self._writers, {}
            files = dict(self._files)
            for writer in writers.values():
                writer.close()
        return files

    def __repr__(self) -> str:
        return f"<AudioRecorder {str(self._directory)!r} speakers={len(self._files)} {'on' if self.recording else 'stopped'}>"
