"""The old home of the event catalog, now :mod:`service_client.events.catalog`.

Kept for one release so that ``from service_client.event_names import CustomEvent`` keeps working.
"""

from __future__ import annotations

from .events.catalog import (
    EVENT_NAMES,
    EVENTS,
    OTHER_LIBRARY_NAMES,
    CustomEvent,
    EventArg,
    EventName,
    EventSpec,
    event_spec,
    unknown_event_message,
)

__all__ = [
    "EVENTS",
    "EVENT_NAMES",
    "OTHER_LIBRARY_NAMES",
    "CustomEvent",
    "EventArg",
    "EventName",
    "EventSpec",
    "event_spec",
    "unknown_event_message",
]
