"""Reading contacts: the list (`GET /api/contacts/paginated`, the spec's) and one contact (ours).

Full API (Scale), scope contacts or contacts:read, the spec's sentence errors like the contact writes. A member
limited to assigned chats sees only the contacts whose chat is assigned to them.
"""

from __future__ import annotations

from quart import Blueprint, request

from inbox_actors.actions import permissions
from inbox_actors.domain.auth_ladder import ErrorStyle, assigned_only_member
from inbox_actors.domain.plans import ApiTier
from inbox_actors.paging import parameter_catalog as catalog
from inbox_actors.reporting import contact_list
from inbox_http.contract import answers
from inbox_http.encoding import json_response
from inbox_http.errors import SentenceError
from inbox_http.guard import accepts, current_credential, guarded, responds
from inbox_http.services import services

blueprint = Blueprint("contact_reads", __name__, url_prefix="/api/contacts")

_POLICY = dict(tier=ApiTier.FULL, scopes=permissions.CONTACTS, errors=ErrorStyle.SENTENCE)


@blueprint.get("/paginated")
@responds(contact_list.ContactPage)
@guarded(**_POLICY)
@accepts(catalog.CONTACTS)
async def paginated():
    """Contacts, newest activity first: page (from 1), limit (1 to 200, default 50), search (name, phone, tags,
    message text)."""
    state, credential = services(), current_credential()
    return json_response(await contact_list.contact_page(state.db, credential.workspace_id, request.args,
                                                         assigned_only_member(credential)))


@blueprint.get("/<phone:phone>")
@responds(contact_list.ContactWithChat)
@guarded(**_POLICY)
@answers(404)
async def one(phone: str):
    """One contact with its chat's status and who claimed it."""
    state, credential = services(), current_credential()
    try:
        found = await contact_list.one_contact(state.db, credential.workspace_id, phone,
                                               assigned_only_member(credential))
    except contact_list.ContactNotFound:
        raise SentenceError(404, "Contact not found") from None
    return json_response(found, headers={"ETag": f'"{found.version}"'})
