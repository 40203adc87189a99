"""MCP's OAuth connection flow, the authorization server's side (docs/mcp.md, "Connecting with OAuth").

The official MCP SDK's handlers (`mcp.server.auth`: metadata, authorize, token, register, revoke) are Starlette
endpoints; `mount` puts them in front of the Quart app in the same ASGI process, under the trio worker (Starlette
runs on anyio, which runs on trio). Modules: `addresses` (the paths and the URLs one request's origin gives them),
`provider` (the SDK's OAuthAuthorizationServerProvider over `inbox_actors.mcp.oauth_*`), `client_auth` (client
secrets checked by their hash), `routes` (the SDK's handlers and metadata for one origin), `mount` (the ASGI
dispatch, with the per-IP ceiling). The consent page the authorize step leads to is the web app's
(`inbox_http/web/connect_pages.py`).
"""
