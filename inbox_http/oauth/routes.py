"""The OAuth endpoints for one origin: the SDK's handlers and metadata documents as Starlette routes.

This is `mcp.server.auth.routes.create_auth_routes` and `create_protected_resource_routes` with three changes:
client secrets are checked by their hash (`client_auth`), so the token and revocation handlers get that
authenticator; the endpoints live under `/oauth/` rather than at the issuer's root (the issuer stays the origin,
so RFC 8414's root well-known address finds the metadata); and the metadata names `none` among the client
authentication methods, since public clients (RFC 7591's `token_endpoint_auth_method: none`, what desktop
assistants register) are taken. The handlers, their CORS (none on authorize, which a browser is sent to) and the
body limit are the SDK's.
"""

from __future__ import annotations

from mcp.server.auth.handlers.authorize import AuthorizationHandler
from mcp.server.auth.handlers.metadata import MetadataHandler, ProtectedResourceMetadataHandler
from mcp.server.auth.handlers.register import RegistrationHandler
from mcp.server.auth.handlers.revoke import RevocationHandler
from mcp.server.auth.handlers.token import TokenHandler
from mcp.server.auth.routes import build_metadata, cors_middleware
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE, RequestBodyLimitMiddleware
from mcp.shared.auth import OAuthMetadata, ProtectedResourceMetadata
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from pydantic import AnyHttpUrl
from starlette.middleware.cors import CORSMiddleware
from starlette.routing import Route, request_response
from starlette.types import ASGIApp

from inbox_http.dependencies import Dependencies
from inbox_http.oauth import addresses
from inbox_http.oauth.client_auth import HashedSecretAuthenticator
from inbox_http.oauth.provider import InboxOAuthProvider

CLIENT_AUTH_METHODS = ["client_secret_post", "client_secret_basic", "none"]
RESOURCE_NAME = "Inbox Actors"
def authorization_server_metadata(origin: str) -> OAuthMetadata:
    """RFC 8414, from the SDK's own (grant types, S256 only, the `code` response type) with this service's
    endpoints. RFC 9207's `iss` is sent with every authorization response."""
    sdk = build_metadata(AnyHttpUrl(origin), None, ClientRegistrationOptions(enabled=True),
                         RevocationOptions(enabled=True))
    return OAuthMetadata.model_validate({
        **sdk.model_dump(mode="json", exclude_none=True),
        "issuer": origin,
        "authorization_endpoint": origin + addresses.AUTHORIZE_PATH,
        "token_endpoint": origin + addresses.TOKEN_PATH,
        "registration_endpoint": origin + addresses.REGISTER_PATH,
        "revocation_endpoint": origin + addresses.REVOKE_PATH,
        "token_endpoint_auth_methods_supported": CLIENT_AUTH_METHODS,
        "revocation_endpoint_auth_methods_supported": CLIENT_AUTH_METHODS,
        "authorization_response_iss_parameter_supported": True,
    })


def protected_resource_metadata(origin: str) -> ProtectedResourceMetadata:
    """RFC 9728: the MCP endpoint, and this service as its authorization server."""
    return ProtectedResourceMetadata.model_validate({
        "resource": addresses.resource_url(origin), "authorization_servers": [origin],
        "resource_name": RESOURCE_NAME, "bearer_methods_supported": ["header"]})


def routes_for(state: Dependencies, origin: str) -> list[Route]:
    provider = InboxOAuthProvider(state, origin)
    authenticator = HashedSecretAuthenticator(provider)
    resource = ProtectedResourceMetadataHandler(protected_resource_metadata(origin)).handle

    def for_clients(handler) -> ASGIApp:
        # Endpoints a client calls with its own credentials; CORS outermost so that the body limit's 413 has it.
        return CORSMiddleware(RequestBodyLimitMiddleware(request_response(handler), DEFAULT_MAX_REQUEST_BODY_SIZE),
                              allow_origins="*", allow_methods=["POST", "OPTIONS"],
                              allow_headers=[MCP_PROTOCOL_VERSION_HEADER])

    return [
        Route(addresses.AUTHORIZATION_SERVER_PATH, methods=["GET", "OPTIONS"],
              endpoint=cors_middleware(MetadataHandler(authorization_server_metadata(origin)).handle,
                                       ["GET", "OPTIONS"])),
        # RFC 9728 3.1's address for the MCP endpoint, and the root one clients fall back to (SEP-985).
        Route(addresses.PROTECTED_RESOURCE_PATH + addresses.MCP_PATH, methods=["GET", "OPTIONS"],
              endpoint=cors_middleware(resource, ["GET", "OPTIONS"])),
        Route(addresses.PROTECTED_RESOURCE_PATH, methods=["GET", "OPTIONS"],
              endpoint=cors_middleware(resource, ["GET", "OPTIONS"])),
        Route(addresses.AUTHORIZE_PATH, methods=["GET", "POST"],
              endpoint=RequestBodyLimitMiddleware(request_response(AuthorizationHandler(provider).handle),
                                                  DEFAULT_MAX_REQUEST_BODY_SIZE)),
        Route(addresses.TOKEN_PATH, methods=["POST", "OPTIONS"],
              endpoint=for_clients(TokenHandler(provider, authenticator).handle)),
        Route(addresses.REGISTER_PATH, methods=["POST", "OPTIONS"],
              endpoint=for_clients(RegistrationHandler(provider, ClientRegistrationOptions(enabled=True)).handle)),
        Route(addresses.REVOKE_PATH, methods=["POST", "OPTIONS"],
              endpoint=for_clients(RevocationHandler(provider, authenticator).handle)),
    ]
