"""API key material: `<KEY_PREFIX>_<43 url-safe characters>` carrying 256 random bits; only its SHA-256 is kept."""

from __future__ import annotations

import hashlib
import re
import secrets

KEY_PREFIX = "inbox"
_RANDOM_BYTES = 32  # 256 bits
_SHAPE = re.compile(rf"^{KEY_PREFIX}_[A-Za-z0-9_-]{{43}}$")


def generate_key() -> str:
    return f"{KEY_PREFIX}_{secrets.token_urlsafe(_RANDOM_BYTES)}"


def hash_key(plaintext: str) -> bytes:
    return hashlib.sha256(plaintext.encode("utf-8")).digest()


def has_key_shape(token: str) -> bool:
    """Cheap check before any lookup: a token of the wrong shape can never be a key."""
    return _SHAPE.fullmatch(token) is not None
