"""The old home of the permission-overwrite helpers, now :mod:`service_client.models._overwrites`.

Kept for one release; import from the new place.
"""

from __future__ import annotations

from ..models._overwrites import (
    OverwriteSpec,
    check_overwrite,
    delete_overwrite,
    fetch_overwrites,
    normalize_overwrites,
    overwrite_body,
    permissions_value,
    post_overwrite,
    resolve_target,
)

__all__ = ["OverwriteSpec", "check_overwrite", "delete_overwrite", "fetch_overwrites", "normalize_overwrites", "overwrite_body", "permissions_value", "post_overwrite", "resolve_target"]
