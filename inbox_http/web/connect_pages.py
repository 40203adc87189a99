"""Connecting an MCP client with OAuth: `/app/connect`, the consent page the authorize step
(`inbox_http/oauth`) sends the browser to; signing in first if need be.

GET shows which application asks (its own name for itself, a claim, and the host the browser goes back to) and,
to a member who may connect one (`settings`, what changing MCP's exposure needs), the actions the workspace
exposes over MCP, to choose the connection's from. POST is Approve (a one-time code, and back to the
application's redirect URI with `code`, `state` and `iss`) or Deny (back with `error=access_denied`). A member
without `settings`, or a plan without MCP, is told why, and can only send the application away. The request in
the URL is checked again here (`oauth_codes.check_request`): for an application or a redirect URI not
registered the page refuses, and never redirects.

Browsers apply `form-action` to the redirect that answers a form, so this page's Content-Security-Policy names
the application's redirect origin there as well as 'self'.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from quart import Blueprint, Response, redirect, request

from inbox_actors.mcp import oauth_codes
from inbox_actors.mcp.oauth_clients import RegisteredClient
from inbox_actors.mcp.oauth_codes import ConnectionRequest
from inbox_actors.mcp.tokens import plan_refusal
from inbox_actors.use_cases import mcp_settings
from inbox_actors.use_cases.outcomes import Done, Refused
from inbox_actors.use_cases.use_case import run
from inbox_http.dependencies import dependencies
from inbox_http.guard import current_caller
from inbox_http.oauth import addresses
from inbox_http.oauth.consent_link import FIELDS, read_request
from inbox_http.web.page_guard import WebRefusal, signed_in
from inbox_http.web.pages import CONTENT_SECURITY_POLICY, page

blueprint = Blueprint("web_connect", __name__, url_prefix="/app/connect", template_folder="templates")

# What a CSP source may be made of, so that nothing a client registered can add a directive of its own.
_NETLOC = re.compile(r"^[A-Za-z0-9.\-]+(?::[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]+\](?::[0-9]{1,5})?$")
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]{0,40}$")


@blueprint.get("")
@signed_in
async def consent_page():
    connection = read_request(request.args)
    client = await _checked(connection)
    return await _consent(client, connection, chosen=None, refusal=None)


@blueprint.post("")
@signed_in
async def decide():
    form = await request.form
    connection = read_request(form)
    client = await _checked(connection)
    if form.get("decision") != "approve":
        return _back(connection, error="access_denied")
    chosen = form.getlist("action")
    code = await run(dependencies().use_case_deps, current_caller(), mcp_settings.APPROVE_CONNECTION,
                     {"request": connection, "actions": chosen})
    if isinstance(code, Refused):
        return await _consent(client, connection, chosen=chosen, refusal=code.message)
    return _back(connection, code=code.data)


async def _checked(connection: ConnectionRequest) -> RegisteredClient:
    """The registered client the request names, or a page saying what is wrong (never a redirect: the request
    did not come through the authorize step, or not unchanged)."""
    origin = _origin()
    client, problem = await oauth_codes.check_request(dependencies().db, connection, addresses.resource_url(origin))
    if client is None or problem is not None:
        reason = problem.description if problem is not None else "the request is not complete"
        raise WebRefusal(400, f"This connection request cannot be used: {reason}. Start connecting again from the "
                              "application.")
    return client


async def _consent(client: RegisteredClient, connection: ConnectionRequest, *, chosen: list[str] | None,
                   refusal: str | None) -> Response:
    caller = current_caller()
    state = dependencies()
    plan = plan_refusal(caller.plan)
    why_not = None
    if plan is not None:
        why_not = plan.message
    elif not mcp_settings.APPROVE_CONNECTION.allows(caller):
        why_not = ("Connecting an assistant needs the settings permission, which you do not have: ask an admin of "
                   "your workspace to connect it.")
    listed = None if why_not is not None else await run(state.use_case_deps, caller, mcp_settings.LIST_ACTIONS, {})
    settings = listed.data.data if isinstance(listed, Done) else []
    offered = [setting for setting in settings if setting.exposed]
    if why_not is None and not offered:
        why_not = ("This workspace exposes no actions over MCP: an admin chooses them in MCP's settings "
                   "(PATCH /api/mcp/actions/{name}) first.")
    response = await page(
        "connect.html", 400 if refusal else 200, client=client, destination=_destination(connection.redirect_uri),
        fields=_fields(connection), offered=offered,
        not_offered=[setting for setting in settings if not setting.exposed],
        chosen=set(chosen) if chosen is not None else {setting.name for setting in offered},
        why_not=why_not, refusal=refusal)
    source = _form_action_source(connection.redirect_uri)
    if source is not None:
        response.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY.replace(
            "form-action 'self'", f"form-action 'self' {source}")
    return response


def _back(connection: ConnectionRequest, **answer: str) -> Response:
    """To the application's redirect URI with the answer, its state and, for RFC 9207, who answered."""
    from mcp.server.auth.provider import (
        construct_redirect_uri,  # the SDK loads on first use (see oauth/mount.py)
    )

    location = construct_redirect_uri(connection.redirect_uri, **answer, state=connection.state, iss=_origin())
    return redirect(location, 303)


def _origin() -> str:
    origin = addresses.origin(request.scheme, request.host)
    if origin is None:
        raise WebRefusal(400, "This request named no valid host.")
    return origin


def _fields(connection: ConnectionRequest) -> list[tuple[str, str]]:
    """The request again, as the form's hidden fields (read back by `read_request`)."""
    values = {"client_id": connection.client_id, "redirect_uri": connection.redirect_uri,
              "explicit": "1" if connection.redirect_uri_explicit else "0",
              "code_challenge": connection.code_challenge, "state": connection.state, "resource": connection.resource}
    return [(name, values[name]) for name in FIELDS if values[name] is not None]


def _destination(uri: str) -> str:
    """Where the browser goes afterwards, as a person checks it: the host of a web address, else the URI."""
    parts = urlsplit(uri)
    return parts.netloc if parts.scheme in ("http", "https") else uri.split("?")[0]


def _form_action_source(uri: str) -> str | None:
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    if scheme in ("http", "https"):
        return f"{scheme}://{parts.netloc}" if _NETLOC.fullmatch(parts.netloc) else None
    return f"{scheme}:" if _SCHEME.fullmatch(scheme) else None
