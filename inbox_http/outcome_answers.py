"""How a REST route runs the use case it binds and answers its outcome: `Done` as JSON with the route's status,
`Refused` in the stable-code convention (`{error, message}` with the refusal's status; a chat's state and the
platform's error beside them when the refusal carries them). Arguments a use case does not take are REST's
`invalid_body`, unless the field names its own code (`invalid_reason`, `invalid_until`). Routes in the older
sentence convention translate for themselves."""

from __future__ import annotations

from typing import Any

from inbox_actors.use_cases.outcomes import Done, Outcome, Refused
from inbox_actors.use_cases.use_case import UseCase, run
from inbox_http.dependencies import dependencies
from inbox_http.encoding import json_response
from inbox_http.errors import ApiError
from inbox_http.guard import current_caller
from inbox_http.json_body import read_json_object


async def run_route(use_case: UseCase, status: int = 200, /, *, body: bool = False, optional: bool = False,
                    **path: Any):
    """Run `use_case` for the request's caller with the path's parameters and, with `body`, the JSON body's
    fields (`optional`: no body at all is no fields); answer its outcome. `status` is positional, so an argument
    of that name (a list's filter) is the use case's."""
    arguments = await read_json_object(empty_ok=optional) if body else {}
    for name in path:
        if name in arguments:
            raise ApiError(400, "invalid_body", f"Invalid request body: {name} is given by the path, not the body.")
    return answer(await run(dependencies().use_case_deps, current_caller(), use_case, {**arguments, **path}), status)


def answer(outcome: Outcome | object, status: int = 200):
    """The outcome as the route's answer; raises the stable-code error of a refusal."""
    if isinstance(outcome, Refused):
        extra = dict(outcome.data or {})
        if outcome.state:
            extra["state"] = outcome.state
        code = "invalid_body" if outcome.code == "invalid_arguments" else outcome.code
        raise ApiError(outcome.status, code, outcome.message, **extra)
    return json_response(outcome.data if isinstance(outcome, Done) else outcome, status)
