"""Message templates, `GET /api/templates` (core API; scope templates, or templates:read to list)."""

from __future__ import annotations

import msgspec
from quart import Blueprint, request

from inbox_actors.domain.plans import ApiTier
from inbox_actors.paging.parameter_catalog import QueryParameter
from inbox_actors.platform import templates
from inbox_actors.use_cases import chat_reads
from inbox_http.dependencies import dependencies
from inbox_http.encoding import json_response
from inbox_http.errors import ApiError
from inbox_http.guard import accepts, current_caller, guarded, responds

blueprint = Blueprint("templates", __name__, url_prefix="/api/templates")


PARAMETERS = (
    QueryParameter("status", "string", "only templates in this status (any case)",
                   rules={"pattern": "^(?:" + "|".join(
                       "".join(f"[{c}{c.lower()}]" for c in status) for status in templates.STATUSES) + ")$"}),
    QueryParameter("name", "string", "only templates of this name"),
    QueryParameter("language", "string", "only templates in this language"),
)


class TemplateList(msgspec.Struct, frozen=True):
    data: list[templates.Template]


@blueprint.get("")
@responds(TemplateList)
@guarded(tier=ApiTier.CORE, use_case=chat_reads.LIST_TEMPLATES)
@accepts(PARAMETERS)
async def list_templates():
    """The workspace's message templates by name and language (?status=, ?name=, ?language= filter)."""
    status = request.args.get("status")
    if status is not None:
        if status.upper() not in templates.STATUSES:
            raise ApiError(400, "invalid_status", f"status must be one of {', '.join(templates.STATUSES)}.")
        status = status.upper()
    found = await templates.workspace_templates(
        dependencies().db, current_caller().workspace_id, status_name=status, name=request.args.get("name"),
        language=request.args.get("language"))
    return json_response(TemplateList(data=found))
