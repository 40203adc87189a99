"""The authorization request as it travels from the authorize step to the web app's consent page and back in its
form: the query string of `/app/connect`. Nothing in it is trusted; the page checks it all again
(`oauth_codes.check_request`)."""

from __future__ import annotations

from typing import Mapping
from urllib.parse import urlencode

from inbox_actors.mcp.oauth_codes import ConnectionRequest
from inbox_http.oauth.addresses import CONSENT_PATH

FIELDS = ("client_id", "redirect_uri", "explicit", "code_challenge", "state", "resource")
# Longer than any field a real request carries (a state is at most 1,024 characters): cut, then refused as wrong.
_MAX_FIELD = 4096


def consent_url(request: ConnectionRequest) -> str:
    """Where the authorize step sends the browser: a path of this service."""
    fields = {"client_id": request.client_id, "redirect_uri": request.redirect_uri,
              "explicit": "1" if request.redirect_uri_explicit else "0", "code_challenge": request.code_challenge,
              "resource": request.resource}
    if request.state is not None:
        fields["state"] = request.state
    return f"{CONSENT_PATH}?{urlencode(fields)}"


def read_request(fields: Mapping[str, str]) -> ConnectionRequest:
    """The request from the page's query string, or from its form's hidden fields (the same names)."""
    def field(name: str) -> str:
        return (fields.get(name) or "")[:_MAX_FIELD]

    state = fields.get("state")
    return ConnectionRequest(client_id=field("client_id"), redirect_uri=field("redirect_uri"),
                             redirect_uri_explicit=field("explicit") == "1", code_challenge=field("code_challenge"),
                             state=None if state is None else state[:_MAX_FIELD], resource=field("resource"))
