"""The workspace's canned responses, `/api/inbox/canned-responses` (full API; ours, beside the specification's
calls: the ready-made replies a member inserts in the reply box). Each call binds one of the canned responses' use
cases (`use_cases/canned_responses.py`: reading them needs what replying does, `inbox` or `inbox:read`; changing
them, `settings`). A member's dashboard session may call these with the same permissions. Stable-code errors; the
set's rules are `inbox_actors/canned_responses/canned_set.py`'s.
"""

from __future__ import annotations

from quart import Blueprint

from inbox_actors.canned_responses.canned_set import CannedList, CannedResponse
from inbox_actors.domain.plans import ApiTier
from inbox_actors.use_cases import canned_responses
from inbox_http.contract import answers, body_of, takes
from inbox_http.guard import guarded, responds
from inbox_http.outcome_answers import run_route

blueprint = Blueprint("canned_responses", __name__, url_prefix="/api/inbox/canned-responses")


@blueprint.get("")
@responds(CannedList)
@guarded(tier=ApiTier.FULL, use_case=canned_responses.LIST, dashboard=True)
async def list_canned():
    """The workspace's canned responses by shortcut: id, shortcut, title, text, who added and changed each."""
    return await run_route(canned_responses.LIST)


@blueprint.post("")
@responds(CannedResponse, 201)
@guarded(tier=ApiTier.FULL, use_case=canned_responses.ADD, dashboard=True)
@takes(body_of(canned_responses.ADD, path=()))
@answers(409)
async def add_canned():
    """Add a canned response: {shortcut, title, text}; a shortcut is unique in the workspace whatever its case."""
    return await run_route(canned_responses.ADD, 201, body=True)


@blueprint.patch("/<id:canned_id>")
@responds(CannedResponse)
@guarded(tier=ApiTier.FULL, use_case=canned_responses.CHANGE, dashboard=True)
@takes(body_of(canned_responses.CHANGE, path=("canned_id",)))
@answers(404, 409)
async def change_canned(canned_id: int):
    """Change a canned response: {shortcut?, title?, text?}; a field left out keeps its value."""
    return await run_route(canned_responses.CHANGE, body=True, canned_id=canned_id)


@blueprint.delete("/<id:canned_id>")
@responds(CannedResponse)
@guarded(tier=ApiTier.FULL, use_case=canned_responses.REMOVE, dashboard=True)
@answers(404)
async def remove_canned(canned_id: int):
    """Remove a canned response; the answer is the response as it was."""
    return await run_route(canned_responses.REMOVE, canned_id=canned_id)
