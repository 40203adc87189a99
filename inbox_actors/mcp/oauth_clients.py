"""OAuth clients of MCP's connection flow, as they registered themselves (RFC 7591, dynamic client registration).

Registration is open to anyone (a desktop assistant registers before any person is involved), so it grants
nothing: a client only ever gets a token through a member's approval in the web app. What is kept is the metadata
as registered, minus the secret; a confidential client's secret is kept as its SHA-256 and checked by hash. Each
registration also forgets clients that registered over a week ago and never connected, so unauthenticated
registrations cannot pile up (the per-IP ceiling bounds their pace).
"""

from __future__ import annotations

import hashlib
import hmac
import json
from datetime import datetime, timedelta
from urllib.parse import urlsplit

import msgspec

from persistence.database import Database
from persistence.queries import mcp_oauth as queries

MAX_CLIENT_ID = 100
MAX_REDIRECT_URIS = 10
MAX_METADATA_BYTES = 16_384
ABANDONED_AFTER = timedelta(days=7)
# Schemes a browser would run or read locally instead of handing to an application.
_NEVER_REDIRECT = frozenset({"javascript", "data", "vbscript", "file", "blob", "about"})
_LOOPBACK = ("localhost", "127.0.0.1", "::1")


class RegisteredClient(msgspec.Struct, frozen=True):
    client_id: str
    metadata: dict
    secret_hash: bytes | None
    created_at: datetime

    @property
    def name(self) -> str:
        """What the consent page calls it: its own name for itself (a claim, which is why the page shows where
        the browser will be sent too)."""
        name = self.metadata.get("client_name")
        return name.strip() if isinstance(name, str) and name.strip() else "An unnamed application"

    @property
    def redirect_uris(self) -> list[str]:
        return [uri for uri in self.metadata.get("redirect_uris") or () if isinstance(uri, str)]

    def secret_matches(self, presented: str) -> bool:
        return self.secret_hash is not None and hmac.compare_digest(self.secret_hash, hash_secret(presented))


class RegistrationRefused(ValueError):
    """Metadata this service does not take (RFC 7591 3.2.2): `error` is the RFC's code; nothing was stored."""

    def __init__(self, error: str, description: str) -> None:
        super().__init__(description)
        self.error = error
        self.description = description


def hash_secret(plaintext: str) -> bytes:
    return hashlib.sha256(plaintext.encode("utf-8")).digest()


def redirect_uri_problem(uri: str) -> str | None:
    """OAuth 2.1's rules for a redirect URI (and RFC 8252's for native apps): no fragment; plain http only to a
    loopback address; https or an application's own scheme otherwise; never a scheme the browser runs itself."""
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    if not scheme or scheme in _NEVER_REDIRECT:
        return f"redirect URI {uri!r} has no scheme an application can receive"
    if parts.fragment:
        return f"redirect URI {uri!r} has a fragment"
    if scheme == "http" and parts.hostname not in _LOOPBACK:
        return f"redirect URI {uri!r} is plain http to a host other than this computer; use https"
    if scheme in ("http", "https") and (not parts.hostname or parts.username is not None):
        return f"redirect URI {uri!r} has no host, or has credentials in it"
    return None


async def register_client(db: Database, *, client_id: str, metadata: dict, secret: str | None,
                          now: datetime) -> None:
    """Stores a client the SDK's registration handler accepted; `metadata` is what it registered, without the
    secret. Refused (RegistrationRefused) past this service's bounds or with a redirect URI OAuth 2.1 forbids."""
    uris = metadata.get("redirect_uris") or []
    if len(uris) > MAX_REDIRECT_URIS:
        raise RegistrationRefused("invalid_redirect_uri", f"at most {MAX_REDIRECT_URIS} redirect URIs")
    for uri in uris:
        problem = redirect_uri_problem(uri)
        if problem is not None:
            raise RegistrationRefused("invalid_redirect_uri", problem)
    encoded = json.dumps(metadata, separators=(",", ":"), sort_keys=True)
    if len(encoded.encode("utf-8")) > MAX_METADATA_BYTES:
        raise RegistrationRefused("invalid_client_metadata",
                                  f"client metadata larger than {MAX_METADATA_BYTES} bytes")
    await queries.prune_clients(db, now - ABANDONED_AFTER)
    await queries.insert_client(db, client_id=client_id, metadata=encoded,
                                secret_hash=None if secret is None else hash_secret(secret))


async def find_client(db: Database, client_id: str) -> RegisteredClient | None:
    if not client_id or len(client_id) > MAX_CLIENT_ID:
        return None
    row = await queries.find_client(db, client_id)
    if row is None:
        return None
    return RegisteredClient(client_id=row["client_id"], metadata=json.loads(row["metadata"]),
                            secret_hash=row["client_secret_hash"], created_at=row["created_at"])
