"""A command that runs a use case: as the operator (`Caller.operator`) of the workspace it names, through the one
runner every door uses, so the command line keeps the same rules and leaves the same records as the API (the
team audit log names it `via` "cli")."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from inbox_actors.domain.errors import OperatorError
from inbox_actors.runtime.clock import WallClock
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.outcomes import Refused
from inbox_actors.use_cases.use_case import UseCase, run
from persistence.database import Database
from persistence.queries import workspaces as workspace_queries


def operator_deps(db: Database) -> UseCaseDeps:
    """What a use case runs with in a command's process: the database and the wall clock alone. No actors run
    here, nor webhook deliveries, so a command offers only use cases that need neither; the running service's
    caches (the bot's) see its changes within their time."""
    return UseCaseDeps(db, actors=None, clock=WallClock(), webhook_guard=None,  # type: ignore[arg-type]
                      webhook_transport=None)  # type: ignore[arg-type]


async def run_as_operator(db: Database, workspace_id: int, use_case: UseCase, arguments: Mapping[str, Any],
                          refusal: type[OperatorError]) -> Any:
    """What the use case answers for the workspace; a refusal (or no such workspace) raised as `refusal`, the
    area's OperatorError, which the command line prints and exits 2 for."""
    if await workspace_queries.find_workspace_created(db, workspace_id) is None:
        raise refusal(f"no workspace {workspace_id}")
    outcome = await run(operator_deps(db), Caller.operator(workspace_id), use_case, arguments)
    if isinstance(outcome, Refused):
        raise refusal(outcome.message)
    return outcome.data
