"""Where the OAuth connection flow's parts are: fixed paths, and the URLs one request's origin gives them.

The service has no configured public address: behind a proxy (INBOX_TRUSTED_PROXY_HOPS) the origin a client used
is the request's scheme and Host as the proxy passed them on. Every URL the flow hands out (the issuer, the
endpoints, the resource a token is for, the challenge's metadata address) is made here from that origin, one way,
so that the strings a client compares (RFC 8414's issuer, RFC 9207's iss, RFC 8707's resource) agree.
"""

from __future__ import annotations

import functools
import re
from urllib.parse import urlsplit

MCP_PATH = "/api/mcp"
PROTECTED_RESOURCE_PATH = "/.well-known/oauth-protected-resource"
AUTHORIZATION_SERVER_PATH = "/.well-known/oauth-authorization-server"
AUTHORIZE_PATH = "/oauth/authorize"
TOKEN_PATH = "/oauth/token"
REGISTER_PATH = "/oauth/register"
REVOKE_PATH = "/oauth/revoke"
CONSENT_PATH = "/app/connect"
# Every path the SDK's handlers answer (each its own route label in the request metrics).
PATHS = (AUTHORIZATION_SERVER_PATH, PROTECTED_RESOURCE_PATH, PROTECTED_RESOURCE_PATH + MCP_PATH, AUTHORIZE_PATH,
         TOKEN_PATH, REGISTER_PATH, REVOKE_PATH)

# A host name, an IPv4 address or a bracketed IPv6 address, and a port: anything else in a Host header names no
# origin this service has.
_HOST = re.compile(r"^(?:[A-Za-z0-9.-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\])(?::[0-9]{1,5})?$")
_LOOPBACK = ("localhost", "127.0.0.1", "::1")


def origin(scheme: str, host: str | None) -> str | None:
    """`scheme://host[:port]`, normalised as the metadata renders it (host in lower case, a default port
    dropped); None for a Host header that names no host."""
    if scheme not in ("http", "https") or not host or _HOST.fullmatch(host) is None:
        return None
    return str(_url_adapter().validate_python(f"{scheme}://{host}"))


@functools.cache
def _url_adapter():
    """As the SDK's metadata models render URLs (an empty path stays empty: no trailing slash on the issuer).
    Imported on first use: pydantic, like the SDK, is no part of a start that never serves OAuth."""
    from pydantic import AnyHttpUrl, ConfigDict, TypeAdapter

    return TypeAdapter(AnyHttpUrl, config=ConfigDict(url_preserve_empty_path=True))


def serves_oauth(origin: str) -> bool:
    """OAuth 2.1 wants HTTPS for the authorization server; plain HTTP is for loopback addresses only (a local
    `scripts/serve`, the tests), as the SDK's own issuer check has it."""
    parts = urlsplit(origin)
    return parts.scheme == "https" or parts.hostname in _LOOPBACK


def resource_url(origin: str) -> str:
    """The protected resource (RFC 8707's `resource`, RFC 9728's `resource`): the MCP endpoint."""
    return f"{origin}{MCP_PATH}"


def resource_metadata_url(origin: str) -> str:
    """RFC 9728 3.1: the well-known path with the resource's path after it."""
    return f"{origin}{PROTECTED_RESOURCE_PATH}{MCP_PATH}"


def bearer_challenge(origin: str | None, *, invalid_token: bool) -> str:
    """The MCP endpoint's `WWW-Authenticate`: RFC 6750's (no error named when no token came) with RFC 9728's
    `resource_metadata`, where an MCP client starts the OAuth connection flow."""
    parts = ['error="invalid_token"'] if invalid_token else []
    if origin is not None:
        parts.append(f'resource_metadata="{resource_metadata_url(origin)}"')
    return "Bearer " + ", ".join(parts) if parts else "Bearer"
