"""LiveKit-style access tokens: HS256 JSON Web Tokens, made and checked with the standard library.

A token's claims are those ``livekit-api`` writes: ``iss`` (the API key), ``sub`` (the
participant identity, here a user's public id), ``name``, ``nbf``, ``exp`` and
``video: {"room": <room name>, "roomJoin": true}``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from typing import Any

__all__ = ["TokenError", "make_token", "read_token"]

#: How long a token is valid, seconds.
TOKEN_TTL_S = 6 * 3600


class TokenError(ValueError):
    """A token that is malformed, badly signed, expired, or not for joining a room."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def make_token(secret: bytes, api_key: str, identity: str, room: str, *, name: str = "",
               ttl_s: int = TOKEN_TTL_S, now: float | None = None) -> str:
    """An HS256 access token letting ``identity`` join ``room`` for ``ttl_s`` seconds."""
    issued = int(time.time() if now is None else now)
    header = {"alg": "HS256", "typ": "JWT"}
    claims = {"iss": api_key, "sub": identity, "name": name, "nbf": issued - 5, "exp": issued + ttl_s,
              "video": {"room": room, "roomJoin": True, "canPublish": True, "canSubscribe": True,
                        "canPublishData": True}}
    signing = _b64(json.dumps(header, separators=(",", ":")).encode()) + "." + \
        _b64(json.dumps(claims, separators=(",", ":")).encode())
    signature = hmac.new(secret, signing.encode("ascii"), hashlib.sha256).digest()
    return signing + "." + _b64(signature)


def read_token(secret: bytes, token: str, *, now: float | None = None) -> dict[str, Any]:
    """The claims of a valid token.

    Raises:
        TokenError: Malformed, signed with another secret or algorithm, expired or not yet
            valid, or without an identity and a room to join.
    """
    parts = token.split(".")
    if len(parts) != 3:
        raise TokenError("not a JWT")
    try:
        header = json.loads(_unb64(parts[0]))
        claims = json.loads(_unb64(parts[1]))
        signature = _unb64(parts[2])
    except (ValueError, UnicodeDecodeError) as exc:
        raise TokenError("malformed JWT") from exc
    if not isinstance(header, dict) or header.get("alg") != "HS256" or not isinstance(claims, dict):
        raise TokenError("unsupported JWT")
    expected = hmac.new(secret, (parts[0] + "." + parts[1]).encode("ascii"), hashlib.sha256).digest()
    if not hmac.compare_digest(expected, signature):
        raise TokenError("bad signature")
    moment = time.time() if now is None else now
    exp, nbf = claims.get("exp"), claims.get("nbf", 0)
    if not isinstance(exp, (int, float)) or moment > exp or not isinstance(nbf, (int, float)) or moment < nbf:
        raise TokenError("expired or not yet valid")
    video = claims.get("video")
    if not isinstance(claims.get("sub"), str) or not claims["sub"] or not isinstance(video, dict) \
            or not video.get("roomJoin") or not isinstance(video.get("room"), str):
        raise TokenError("the token grants no room join")
    return claims
