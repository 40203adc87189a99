"""The workspace's labels, `/api/labels` (full API; ours: the spec's scope table has `inbox` "label
conversations" and every Conversation its `labels`, without the calls). Each call binds one of the label set's use
cases (`use_cases/labels.py`: reading the set needs what reading chats does, `inbox` or `contacts` or their `:read`;
changing it, `settings`). A member's dashboard session may call these with the same permissions. Stable-code
errors; the rules are `inbox_actors/labels/label_set.py`'s.
"""

from __future__ import annotations

from quart import Blueprint

from inbox_actors.domain.plans import ApiTier
from inbox_actors.labels import label_set
from inbox_actors.use_cases import labels
from inbox_http.contract import answers, body_of, takes
from inbox_http.guard import guarded, responds
from inbox_http.outcome_answers import run_route

blueprint = Blueprint("labels", __name__, url_prefix="/api/labels")


@blueprint.get("")
@responds(label_set.LabelList)
@guarded(tier=ApiTier.FULL, use_case=labels.LIST, dashboard=True)
async def list_labels():
    """The workspace's labels by name: id, name, colour."""
    return await run_route(labels.LIST)


@blueprint.post("")
@responds(label_set.LabelView, 201)
@guarded(tier=ApiTier.FULL, use_case=labels.CREATE, dashboard=True)
@takes(body_of(labels.CREATE, path=()))
@answers(409)
async def create_label():
    """Create a label: {name, colour?} (#rrggbb; a grey by default)."""
    return await run_route(labels.CREATE, 201, body=True)


@blueprint.patch("/<id:label_id>")
@responds(label_set.LabelView)
@guarded(tier=ApiTier.FULL, use_case=labels.CHANGE, dashboard=True)
@takes(body_of(labels.CHANGE, path=("label_id",)))
@answers(404, 409)
async def change_label(label_id: int):
    """Rename or recolour a label: {name?, colour?}; a new name replaces the old one on every chat."""
    return await run_route(labels.CHANGE, body=True, label_id=label_id)


@blueprint.delete("/<id:label_id>")
@responds(label_set.LabelDeleted)
@guarded(tier=ApiTier.FULL, use_case=labels.DELETE, dashboard=True)
@answers(404)
async def delete_label(label_id: int):
    """Delete a label; it comes off every chat that has it."""
    return await run_route(labels.DELETE, label_id=label_id)
