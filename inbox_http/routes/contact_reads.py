"""Reading contacts: the list (`GET /api/contacts/paginated`, the spec's) and one contact (ours).

Full API (Scale), the spec's sentence errors like the contact writes. Each binds a contacts use case
(`use_cases/contacts.py`: `LIST`, `SHOW`, which state the permission, contacts or contacts:read); a member limited to
assigned chats sees only the contacts whose chat is assigned to them.
"""

from __future__ import annotations

from quart import Blueprint, request

from inbox_actors.domain.auth_ladder import ErrorStyle
from inbox_actors.domain.plans import ApiTier
from inbox_actors.paging import parameter_catalog as catalog
from inbox_actors.reporting import contact_list
from inbox_actors.use_cases import contacts
from inbox_actors.use_cases.outcomes import Refused
from inbox_actors.use_cases.use_case import UseCase, run
from inbox_http.contract import answers
from inbox_http.dependencies import dependencies
from inbox_http.encoding import json_response
from inbox_http.errors import SentenceError
from inbox_http.guard import accepts, current_caller, guarded, responds

blueprint = Blueprint("contact_reads", __name__, url_prefix="/api/contacts")

_POLICY = dict(tier=ApiTier.FULL, errors=ErrorStyle.SENTENCE)


async def _read(use_case: UseCase, **arguments: object):
    outcome = await run(dependencies().use_case_deps, current_caller(), use_case, arguments)
    if isinstance(outcome, Refused):
        raise SentenceError(outcome.status, outcome.message)
    return outcome.data


@blueprint.get("/paginated")
@responds(contact_list.ContactPage)
@guarded(**_POLICY, use_case=contacts.LIST)
@accepts(catalog.CONTACTS)
async def paginated():
    """Contacts, newest activity first: page (from 1), limit (1 to 200, default 50), search (name, phone, tags,
    message text)."""
    return json_response(await _read(contacts.LIST, query=request.args.to_dict()))


@blueprint.get("/<phone:phone>")
@responds(contact_list.ContactWithChat)
@guarded(**_POLICY, use_case=contacts.SHOW)
@answers(404)
async def one(phone: str):
    """One contact with its chat's status and who claimed it."""
    found = await _read(contacts.SHOW, phone=phone)
    return json_response(found, headers={"ETag": f'"{found.version}"'})
