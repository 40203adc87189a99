"""How a REST handler answers an action's outcome: the value as JSON with the route's status, or a `Refused` in
the stable-code convention (`{error, message}` with the refusal's status; a chat's state and the platform's error
beside them when the refusal carries them). Routes in the older sentence convention translate for themselves."""

from __future__ import annotations

from inbox_actors.actions.outcomes import Refused
from inbox_http.encoding import json_response
from inbox_http.errors import ApiError


def answer(outcome: object, status: int = 200):
    """The outcome as the route's answer; raises the stable-code error of a refusal."""
    if isinstance(outcome, Refused):
        extra = dict(outcome.data or {})
        if outcome.state:
            extra["state"] = outcome.state
        raise ApiError(outcome.status, outcome.code, outcome.message, **extra)
    return json_response(outcome, status)
