"""Client authentication at the token and revocation endpoints, against secrets kept as their SHA-256.

The SDK's `ClientAuthenticator` compares the stored secret with the presented one as plaintext, which would mean
storing the plaintext; this one compares hashes (`RegisteredClient.secret_matches`, constant time) and otherwise
keeps the SDK's rules: `client_secret_basic` from the Authorization header (its client id must be the form's),
`client_secret_post` from the form, `none` for a public client (PKCE is then what binds the code to it).
"""

from __future__ import annotations

import base64
import binascii
from urllib.parse import unquote

from mcp.server.auth.middleware.client_auth import AuthenticationError, ClientAuthenticator
from mcp.shared.auth import OAuthClientInformationFull
from starlette.requests import Request

from inbox_http.oauth.provider import StoredClient


class HashedSecretAuthenticator(ClientAuthenticator):
    async def authenticate_request(self, request: Request) -> OAuthClientInformationFull:
        form = await request.form()
        client_id = form.get("client_id")
        if not isinstance(client_id, str) or not client_id:
            raise AuthenticationError("Missing client_id")
        client = await self.provider.get_client(client_id)
        if not isinstance(client, StoredClient):
            raise AuthenticationError("Invalid client_id")
        method = client.token_endpoint_auth_method
        if method == "none":
            return client
        if method == "client_secret_basic":
            presented = _basic_secret(request.headers.get("Authorization", ""), client_id)
        elif method == "client_secret_post":
            sent = form.get("client_secret")
            presented = sent if isinstance(sent, str) else None
        else:
            raise AuthenticationError(f"Unsupported auth method: {method}")
        if not presented:
            raise AuthenticationError("Client secret is required")
        if not client.registered.secret_matches(presented):
            raise AuthenticationError("Invalid client_secret")
        return client


def _basic_secret(authorization: str, client_id: str) -> str:
    """RFC 6749 2.3.1: `Basic base64(urlencode(id):urlencode(secret))`."""
    if not authorization.startswith("Basic "):
        raise AuthenticationError("Missing or invalid Basic authentication in Authorization header")
    try:
        decoded = base64.b64decode(authorization[6:], validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError, binascii.Error):
        raise AuthenticationError("Invalid Basic authentication header") from None
    basic_id, colon, secret = decoded.partition(":")
    if not colon:
        raise AuthenticationError("Invalid Basic authentication header")
    if unquote(basic_id) != client_id:
        raise AuthenticationError("Client ID mismatch in Basic auth")
    return unquote(secret)
