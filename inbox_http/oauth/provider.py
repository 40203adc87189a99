"""The SDK's `OAuthAuthorizationServerProvider` for this service: its handlers (`mcp.server.auth.handlers`) parse
and answer the OAuth requests and check what the protocol fixes (PKCE's verifier, the redirect URI, expiry, client
ids); this says what is stored and what is issued, through `inbox_actors.mcp.oauth_*`.

One provider per origin (`routes.routes_for`): the resource a token is for is this service's MCP endpoint as the
client reached it. Scopes are not used: what a connection may do is the actions the approving member chose.
"""

from __future__ import annotations

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    RefreshToken,
    RegistrationError,
    TokenError,
)
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import PrivateAttr

from inbox_actors.mcp import oauth_clients, oauth_codes, oauth_connections
from inbox_actors.mcp.oauth_clients import RegisteredClient
from inbox_actors.mcp.oauth_codes import CodeGrant, ConnectionRequest, UsedCode
from inbox_actors.mcp.oauth_connections import AccessGrant, ExchangeRefused, Issued, RefreshGrant
from inbox_http.dependencies import Dependencies
from inbox_http.oauth import addresses
from inbox_http.oauth.consent_link import consent_url


class StoredClient(OAuthClientInformationFull):
    """A registered client as the SDK's handlers read it, with the record it came from (its secret's hash)."""

    _registered: RegisteredClient = PrivateAttr()

    @property
    def registered(self) -> RegisteredClient:
        return self._registered


class Code(AuthorizationCode):
    _grant: CodeGrant = PrivateAttr()


class Refresh(RefreshToken):
    _grant: RefreshGrant = PrivateAttr()

    @property
    def connection(self) -> int:
        return self._grant.token_id


class Access(AccessToken):
    _grant: AccessGrant = PrivateAttr()

    @property
    def connection(self) -> int:
        return self._grant.token_id


class InboxOAuthProvider:
    def __init__(self, state: Dependencies, origin: str) -> None:
        self._state = state
        self._resource = addresses.resource_url(origin)

    # -- clients -------------------------------------------------------------------------------------------------

    async def get_client(self, client_id: str) -> StoredClient | None:
        registered = await oauth_clients.find_client(self._state.db, client_id)
        if registered is None:
            return None
        client = StoredClient.model_validate({**registered.metadata, "client_id": registered.client_id})
        client._registered = registered
        return client

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        metadata = client_info.model_dump(mode="json", exclude={"client_secret"}, exclude_none=True)
        try:
            await oauth_clients.register_client(self._state.db, client_id=client_info.client_id, metadata=metadata,
                                                secret=client_info.client_secret, now=self._state.clock.now())
        except oauth_clients.RegistrationRefused as refused:
            raise RegistrationError(refused.error, refused.description) from None  # type: ignore[arg-type]

    # -- authorization -------------------------------------------------------------------------------------------

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        """The handler checked the client and its redirect URI; the consent page in the web app takes it from
        here (the member signs in there if they have to)."""
        request = ConnectionRequest(client_id=client.client_id, redirect_uri=str(params.redirect_uri),
                                    redirect_uri_explicit=params.redirect_uri_provided_explicitly,
                                    code_challenge=params.code_challenge, state=params.state,
                                    resource=params.resource or self._resource)
        problem = oauth_codes.request_problem(request, self._resource)
        if problem is not None:
            raise AuthorizeError(problem.error, problem.description)  # type: ignore[arg-type]
        return consent_url(request)

    async def load_authorization_code(self, client: OAuthClientInformationFull, authorization_code: str
                                      ) -> Code | None:
        found = await oauth_codes.find_code(self._state.db, authorization_code)
        if isinstance(found, UsedCode):
            await oauth_connections.code_used_twice(self._state.db, found.token_id, client.client_id,
                                                    self._state.clock.now())
            return None
        if found is None:
            return None
        code = Code(code=authorization_code, scopes=[], expires_at=found.expires_at.timestamp(),
                    client_id=found.client_id, code_challenge=found.code_challenge, redirect_uri=found.redirect_uri,
                    redirect_uri_provided_explicitly=found.redirect_uri_explicit, resource=found.resource,
                    subject=str(found.member_id))
        code._grant = found
        return code

    async def exchange_authorization_code(self, client: OAuthClientInformationFull, authorization_code: Code
                                          ) -> OAuthToken:
        try:
            issued = await oauth_connections.open_connection(
                self._state.db, authorization_code._grant, client_name=client.client_name or "",
                now=self._state.clock.now())
        except ExchangeRefused as refused:
            raise TokenError("invalid_grant", str(refused)) from None
        return _answer(issued)

    # -- refresh -------------------------------------------------------------------------------------------------

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> Refresh | None:
        found = await oauth_connections.find_refresh(self._state.db, refresh_token, self._state.clock.now())
        if found is None:
            return None
        loaded = Refresh(token=refresh_token, client_id=found.client_id, scopes=[],
                         expires_at=int(found.expires_at.timestamp()), resource=found.resource)
        loaded._grant = found
        return loaded

    async def exchange_refresh_token(self, client: OAuthClientInformationFull, refresh_token: Refresh,
                                     scopes: list[str]) -> OAuthToken:
        try:
            issued = await oauth_connections.refresh(self._state.db, refresh_token._grant, self._state.clock.now())
        except ExchangeRefused as refused:
            raise TokenError("invalid_grant", str(refused)) from None
        return _answer(issued)

    # -- revocation ----------------------------------------------------------------------------------------------

    async def load_access_token(self, token: str) -> Access | None:
        """Read by the revocation endpoint only: the MCP endpoint looks its tokens up itself."""
        found = await oauth_connections.find_access(self._state.db, token)
        if found is None:
            return None
        loaded = Access(token=token, client_id=found.client_id, scopes=[],
                        expires_at=int(found.expires_at.timestamp()), resource=self._resource)
        loaded._grant = found
        return loaded

    async def revoke_token(self, token: Access | Refresh) -> None:
        """Either token ends the whole connection: both kinds belong to the one MCP token."""
        await oauth_connections.revoke(self._state.db, token.connection, self._state.clock.now(),
                                       via=f"oauth_client:{token.client_id}", reason="revoked by the client")


def _answer(issued: Issued) -> OAuthToken:
    return OAuthToken(access_token=issued.access_token, expires_in=issued.expires_in,
                      refresh_token=issued.refresh_token)
