"""The workspace's labels, `/api/labels` (full API; ours: the spec's scope table has `inbox` "label
conversations" and every Conversation its `labels`, without the calls). Reading the set needs what reading chats
does (`inbox` or `contacts`, or their `:read`); changing it, `settings`. A member's dashboard session may call
these with the same permissions. Stable-code errors; the rules are `inbox_actors/team/labels.py`'s.
"""

from __future__ import annotations

from quart import Blueprint

from inbox_actors.actions import labels as label_actions
from inbox_actors.actions import permissions
from inbox_actors.domain.plans import ApiTier
from inbox_actors.team import labels
from inbox_http.contract import answers, takes
from inbox_http.encoding import json_response
from inbox_http.guard import current_caller, guarded, responds
from inbox_http.json_body import read_json_body
from inbox_http.outcome_answers import answer
from inbox_http.services import services

blueprint = Blueprint("labels", __name__, url_prefix="/api/labels")


@blueprint.get("")
@responds(labels.LabelList)
@guarded(tier=ApiTier.FULL, scopes=permissions.CHAT_CONTENT, dashboard=True)
async def list_labels():
    """The workspace's labels by name: id, name, colour."""
    return json_response(await labels.labels(services().db, current_caller().workspace_id))


@blueprint.post("")
@responds(labels.LabelView, 201)
@guarded(tier=ApiTier.FULL, scopes=permissions.SETTINGS, dashboard=True)
@takes(labels.CreateLabel)
@answers(409)
async def create_label():
    """Create a label: {name, colour?} (#rrggbb; a grey by default)."""
    body = await read_json_body(labels.CreateLabel)
    return answer(await label_actions.create(services().action_deps, current_caller(), body), 201)


@blueprint.patch("/<id:label_id>")
@responds(labels.LabelView)
@guarded(tier=ApiTier.FULL, scopes=permissions.SETTINGS, dashboard=True)
@takes(labels.ChangeLabel)
@answers(404, 409)
async def change_label(label_id: int):
    """Rename or recolour a label: {name?, colour?}; a new name replaces the old one on every chat."""
    body = await read_json_body(labels.ChangeLabel)
    return answer(await label_actions.change(services().action_deps, current_caller(), label_id, body))


@blueprint.delete("/<id:label_id>")
@responds(labels.LabelDeleted)
@guarded(tier=ApiTier.FULL, scopes=permissions.SETTINGS, dashboard=True)
@answers(404)
async def delete_label(label_id: int):
    """Delete a label; it comes off every chat that has it."""
    return answer(await label_actions.delete(services().action_deps, current_caller(), label_id))
