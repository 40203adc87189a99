"""Message templates, `GET /api/templates` (core API; scope templates, or templates:read to list)."""

from __future__ import annotations

import msgspec
from quart import Blueprint, request

from inbox_actors.domain.plans import ApiTier
from inbox_actors.paging.parameter_catalog import QueryParameter
from inbox_actors.platform import templates
from inbox_actors.use_cases import chat_reads
from inbox_actors.use_cases.fields import ONE_LINE
from inbox_http.guard import accepts, guarded, responds
from inbox_http.outcome_answers import run_route

blueprint = Blueprint("templates", __name__, url_prefix="/api/templates")


PARAMETERS = (
    QueryParameter("status", "string", "only templates in this status (any case)",
                   rules={"pattern": "^(?:" + "|".join(
                       "".join(f"[{c}{c.lower()}]" for c in status) for status in templates.STATUSES) + ")$"}),
    # Text with a control character no template can have: refused (400 invalid_name, invalid_language), as stated.
    QueryParameter("name", "string", "only templates of this name", rules={"pattern": ONE_LINE}),
    QueryParameter("language", "string", "only templates in this language", rules={"pattern": ONE_LINE}),
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
    filters = {"status": None if status is None else status.upper(),  # the API takes a status in any case
               "name": request.args.get("name"), "language": request.args.get("language")}
    return await run_route(chat_reads.LIST_TEMPLATES, **{name: value for name, value in filters.items()
                                                          if value is not None})
