"""service_client: a synchronous, thread-based client for bots on the chat service.

See README.rst for the two commands a newcomer runs, and python-api.md for the names.
"""

from __future__ import annotations

import logging

from .errors import (
    CommandLoadWarning,
    InsecureHostWarning,
    RateLimitError,
    ServiceAPIError,
    ServiceAuthError,
    ServiceError,
    ServiceTimeoutError,
)

__version__ = "0.1.0"

__all__ = [
    "CommandLoadWarning",
    "InsecureHostWarning",
    "RateLimitError",
    "ServiceAPIError",
    "ServiceAuthError",
    "ServiceError",
    "ServiceTimeoutError",
]

logging.getLogger(__name__).addHandler(logging.NullHandler())
