"""The package's version, in one place (``service_client.__version__`` re-exports it)."""

from __future__ import annotations

__all__ = ["__version__"]

#: The release of this package (PEP 440).
__version__ = "0.1.0"
