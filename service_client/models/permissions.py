"""The old home of :class:`Permissions`; it now lives one level up, in the package's
``permissions`` module (below the models, so that the emulator can use it too).

Kept for one release, so that importing it from here keeps working.
"""

from __future__ import annotations

from ..permissions import ALL, DEFAULT, Permissions, parse_permissions

__all__ = ["ALL", "DEFAULT", "Permissions", "parse_permissions"]
