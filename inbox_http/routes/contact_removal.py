"""Deleting and exporting contacts: `DELETE /api/contacts/{phone}`, `POST /api/contacts/bulk-delete`,
`GET /api/contacts/export`.

Full API (Scale), the contact routes' sentence errors. Each binds a contact removal use case
(`use_cases/contact_removal.py`: deleting needs `contacts_delete`, exporting `contacts_export`, neither with a read
variant). A deletion erases the customer's chat and the contact (inbox_actors/conversations/contact_erasure.py);
an export streams every contact as CSV or JSON lines.
"""

from __future__ import annotations

from typing import Any

import msgspec
from quart import Blueprint, Response, request

from inbox_actors.contacts import export
from inbox_actors.conversations import contact_erasure
from inbox_actors.domain.auth_ladder import ErrorStyle
from inbox_actors.domain.plans import ApiTier
from inbox_actors.paging.parameter_catalog import QueryParameter
from inbox_actors.use_cases import contact_removal
from inbox_actors.use_cases.contact_removal import BulkDelete, BulkDeleted
from inbox_actors.use_cases.outcomes import Refused
from inbox_actors.use_cases.use_case import UseCase, run
from inbox_http.contract import answers, takes
from inbox_http.dependencies import dependencies
from inbox_http.encoding import json_response
from inbox_http.errors import SentenceError
from inbox_http.guard import accepts, current_caller, guarded, responds
from inbox_http.json_body import read_json_body

blueprint = Blueprint("contact_removal", __name__, url_prefix="/api/contacts")

EXPORT_PARAMETERS = (QueryParameter("format", "string", "csv (default) or jsonl", tuple(export.FORMATS)),)


async def _run(use_case: UseCase, arguments: dict[str, Any]) -> Any:
    """What the use case did for the request's caller; a refusal is answered as its sentence (the spec's)."""
    outcome = await run(dependencies().use_case_deps, current_caller(), use_case, arguments)
    if isinstance(outcome, Refused):
        raise SentenceError(outcome.status, outcome.message)
    return outcome.data


@blueprint.delete("/<phone:phone>")
@responds(contact_erasure.ContactDeleted)
@guarded(tier=ApiTier.FULL, use_case=contact_removal.DELETE, errors=ErrorStyle.SENTENCE)
@answers(404, 409)
async def delete_contact(phone: str):
    """Delete the contact and its chat (messages, receipts, views, assignment history): for good."""
    return json_response(await _run(contact_removal.DELETE, {"phone": phone}))


@blueprint.post("/bulk-delete")
@responds(BulkDeleted)
@guarded(tier=ApiTier.FULL, use_case=contact_removal.BULK_DELETE, errors=ErrorStyle.SENTENCE)
@takes(BulkDelete)
async def bulk_delete():
    """Delete up to 500 contacts (and their chats); each phone's outcome, in the order given."""
    body = await read_json_body(BulkDelete)
    return json_response(await _run(contact_removal.BULK_DELETE, msgspec.structs.asdict(body)))


@blueprint.get("/export")
@responds(bytes, media=tuple(export.FORMATS.values()))
@guarded(tier=ApiTier.FULL, use_case=contact_removal.EXPORT, errors=ErrorStyle.SENTENCE)
@accepts(EXPORT_PARAMETERS)
async def export_contacts():
    """Every contact, streamed: CSV (a header row; tags joined with ';', attributes as JSON) or JSON lines."""
    found: contact_removal.ContactExport = await _run(contact_removal.EXPORT,
                                                      {"format": request.args.get("format", "csv")})
    return Response(found.chunks, 200, content_type=found.content_type,
                    headers={"Content-Disposition": f'attachment; filename="{found.filename}"'})
