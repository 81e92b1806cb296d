"""The emulator's web page: a chat window served by the emulator itself.

The page is plain HTML, CSS and JavaScript shipped inside the package (``static/``), with no
build step and nothing fetched from elsewhere. It is a real client of the emulated service: it
speaks the public REST API under ``/api/v2`` and socket.io, with the official ``socket.io-client``
browser build vendored in ``static/vendor/`` (version, source and checksum in
``static/vendor/VENDORED.txt``, licence beside it). It reads no state directly; the only
control-plane routes it calls are the user list (who you are) and the "as admin" actions.

Served at ``/`` and ``/_emulator/ui``; the assets at ``/_emulator/ui/<name>``.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from starlette.responses import Response

__all__ = ["PAGE_CSP", "PAGE_FILES", "page_file"]

#: Served name -> (path inside the package's ``static/`` folder, content type).
PAGE_FILES: dict[str, tuple[str, str]] = {
    "index.html": ("index.html", "text/html; charset=utf-8"),
    "app.js": ("app.js", "text/javascript; charset=utf-8"),
    "style.css": ("style.css", "text/css; charset=utf-8"),
    "socket.io.min.js": ("vendor/socket.io.min.js", "text/javascript; charset=utf-8"),
    "socket.io-client.LICENSE": ("vendor/socket.io-client.LICENSE", "text/plain; charset=utf-8"),
    "VENDORED.txt": ("vendor/VENDORED.txt", "text/plain; charset=utf-8"),
}

#: The page's own policy: everything it loads comes from the emulator itself, socket.io connects
#: to the same origin, and nothing may frame it. Only the page gets it: its files, like every other
#: answer of the emulator, get the policy that allows nothing (``guard.StrictHeaders``).
PAGE_CSP = ("default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; "
            "frame-ancestors 'none'")
_HEADERS = {"X-Content-Type-Options": "nosniff", "Cache-Control": "no-cache"}
_PAGE_HEADERS = {**_HEADERS, "Content-Security-Policy": PAGE_CSP}


@cache
def _read(relative: str) -> bytes:
    node = resources.files(__package__ or "service_client.emulator").joinpath("static")
    for part in relative.split("/"):  # one segment per call: Python 3.10's joinpath takes only one
        node = node.joinpath(part)
    return node.read_bytes()


def page_file(name: str) -> Response | None:
    """Return one file of the web page as an HTTP response.

    Args:
        name: A served name, a key of :data:`PAGE_FILES` (``"index.html"``, ``"app.js"``, ...).
            Nothing else is served: no path is ever joined from request input.

    Returns:
        A 200 response with the file's content type, ``nosniff`` and ``Cache-Control: no-cache``;
        the page (``index.html``) with a content security policy that allows only the emulator's
        own origin. None for an unknown name.

    Raises:
        OSError: The file is missing from the installed package (a broken install).
    """
    entry = PAGE_FILES.get(name)
    if entry is None:
        return None
    relative, content_type = entry
    headers = _PAGE_HEADERS if name == "index.html" else _HEADERS
    return Response(_read(relative), status_code=200, media_type=content_type, headers=headers)
