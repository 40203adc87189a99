"""Running a tool for a caller: MCP's `tools/call` and the connectors' actions both come here, run the tool's
declared use case through the one runner (`use_case.run`: permission, arguments, handler), and translate the
outcome into their own answers (`inbox_http/mcp/tool_result.py`, `inbox_http/connectors/action_calls.py`).

Every failure a caller can act on is a `Refused` outcome, never an exception; here a failing part of the service
(an actor that failed, the database gone) is one too, since a tool's caller is a model or an automation that reads
a sentence rather than a status line.
"""

from __future__ import annotations

from typing import Any

import trio

from inbox_actors.runtime import ActorError
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.catalog import Action
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.outcomes import Outcome, Reason, Refused
from inbox_actors.use_cases.use_case import run
from persistence.database import DatabaseUnavailable


async def run_action(deps: UseCaseDeps, caller: Caller, action: Action, arguments: dict[str, Any]) -> Outcome:
    """The tool's outcome; a failing part of the service is refused as unavailable."""
    try:
        return await run(deps, caller, action.use_case, arguments)
    except trio.Cancelled:
        raise
    except (ActorError, DatabaseUnavailable) as err:
        return Refused(Reason.UNAVAILABLE, f"The service could not complete {action.name} right now "
                       f"({type(err).__name__}); retry shortly. A write may still have happened: read before "
                       "retrying it.", 503, "service_unavailable")
