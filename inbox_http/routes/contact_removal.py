"""Deleting and exporting contacts: `DELETE /api/contacts/{phone}`, `POST /api/contacts/bulk-delete`,
`GET /api/contacts/export`.

Full API (Scale), the contact routes' sentence errors. Deleting needs `contacts_delete`, exporting
`contacts_export` (neither has a read variant). A deletion erases the customer's chat and the contact
(inbox_actors/conversations/contact_erasure.py); an export streams every contact as CSV or JSON lines.
"""

from __future__ import annotations

from typing import Annotated

import msgspec
from quart import Blueprint, Response, request

from inbox_actors.actions import contacts, permissions
from inbox_actors.contacts import export
from inbox_actors.conversations import contact_erasure
from inbox_actors.domain.auth_ladder import ErrorStyle
from inbox_actors.domain.phones import phone_or_none
from inbox_actors.domain.plans import ApiTier
from inbox_actors.paging.parameter_catalog import QueryParameter
from inbox_http.contract import answers, takes
from inbox_http.encoding import json_response
from inbox_http.errors import SentenceError
from inbox_http.guard import accepts, current_caller, guarded, responds
from inbox_http.json_body import read_json_body
from inbox_http.services import services

blueprint = Blueprint("contact_removal", __name__, url_prefix="/api/contacts")

_DELETE = dict(tier=ApiTier.FULL, scopes=permissions.CONTACTS_DELETE, errors=ErrorStyle.SENTENCE)
_EXPORT = dict(tier=ApiTier.FULL, scopes=permissions.CONTACTS_EXPORT, errors=ErrorStyle.SENTENCE)
EXPORT_PARAMETERS = (QueryParameter("format", "string", "csv (default) or jsonl", tuple(export.FORMATS)),)


class BulkDelete(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    phones: Annotated[list[Annotated[str, msgspec.Meta(min_length=1, max_length=32)]],
                      msgspec.Meta(min_length=1, max_length=contact_erasure.MAX_BULK)]


class BulkDeleted(msgspec.Struct, frozen=True):
    deleted: int
    results: list[contact_erasure.ContactDeleted]


@blueprint.delete("/<phone:phone>")
@responds(contact_erasure.ContactDeleted)
@guarded(**_DELETE)
@answers(404, 409)
async def delete_contact(phone: str):
    """Delete the contact and its chat (messages, receipts, views, assignment history): for good."""
    if phone_or_none(phone) is None:
        raise SentenceError(404, contacts.CONTACT_NOT_FOUND)
    deleted = await contacts.erase(services().action_deps, current_caller(), phone)
    if not deleted.deleted:
        raise SentenceError(deleted.status, deleted.error or "Contact not found")
    return json_response(deleted)


@blueprint.post("/bulk-delete")
@responds(BulkDeleted)
@guarded(**_DELETE)
@takes(BulkDelete)
async def bulk_delete():
    """Delete up to 500 contacts (and their chats); each phone's outcome, in the order given."""
    body = await read_json_body(BulkDelete)
    deps, caller = services().action_deps, current_caller()
    results = [await contacts.erase(deps, caller, raw)
               for raw in dict.fromkeys(body.phones)]  # a phone given twice is deleted once
    return json_response(BulkDeleted(sum(result.deleted for result in results), results))


@blueprint.get("/export")
@responds(bytes, media=tuple(export.FORMATS.values()))
@guarded(**_EXPORT)
@accepts(EXPORT_PARAMETERS)
async def export_contacts():
    """Every contact, streamed: CSV (a header row; tags joined with ';', attributes as JSON) or JSON lines."""
    fmt = request.args.get("format", "csv")
    if fmt not in export.FORMATS:
        raise SentenceError(400, "format must be csv or jsonl.")
    state, caller = services(), current_caller()
    filename = f"contacts-{caller.workspace_id}.{fmt}"
    return Response(export.export(state.db, caller.workspace_id, fmt), 200, content_type=export.FORMATS[fmt],
                    headers={"Content-Disposition": f'attachment; filename="{filename}"'})

