"""A contact's writes through its contact card actor, and its erasure, with the one rule around them: a caller
limited to assigned chats edits or deletes only the contacts of those chats (any other is "Contact not found", as
the contact reads answer). The card's own refusals (a field's rule, a version conflict) come back as its
`ContactRefusal`, which carries what each front door needs to answer them (the spec's sentence, or a stable code
and the current version)."""

from __future__ import annotations

from inbox_actors.actions.caller import Caller
from inbox_actors.actions.deps import ActionDeps
from inbox_actors.actions.outcomes import Reason, Refused
from inbox_actors.contacts import contact_card
from inbox_actors.contacts.contact_card import ContactSaved, ContactRefusal, CreateContact, EditContact
from inbox_actors.conversations import contact_erasure
from inbox_actors.conversations.contact_erasure import ContactDeleted
from inbox_actors.domain.phones import InvalidPhone, normalise_phone
from inbox_actors.reporting.conversation_detail import find_detail

CONTACT_NOT_FOUND = "Contact not found"  # the spec's sentence


async def change(deps: ActionDeps, caller: Caller, raw_phone: str, edit: CreateContact | EditContact
                 ) -> ContactSaved | ContactRefusal | Refused:
    """The contact card's answer to `edit` (the contact, and for a create whether it was made; or the card's
    refusal), or `Refused` when the caller may not touch this contact."""
    try:
        phone = normalise_phone(raw_phone)
    except InvalidPhone as err:
        return Refused(Reason.INVALID, f"Invalid phone number: {err}", 400, "invalid_phone")
    if not await _visible(deps, caller, phone):
        return Refused(Reason.NOT_FOUND, CONTACT_NOT_FOUND, 404, "not_found")
    return await contact_card.change_contact(deps.actors, caller.workspace_id, phone, edit)  # type: ignore[arg-type]


async def erase(deps: ActionDeps, caller: Caller, raw_phone: str) -> ContactDeleted:
    """Delete the contact and its chat for good (messages, receipts, views, assignment history); the outcome says
    whether it was deleted, and if not why, with its status."""
    try:
        phone = normalise_phone(raw_phone)
    except InvalidPhone as err:
        return ContactDeleted(raw_phone, False, 0, f"{err}.", 400)
    if not await _visible(deps, caller, phone):
        return ContactDeleted(phone, False, 0, CONTACT_NOT_FOUND, 404)
    return await contact_erasure.delete_contact(deps.actors, deps.db, caller.workspace_id, phone,
                                                member_id=caller.member_id, via=caller.author,
                                                now=deps.clock.now())


async def _visible(deps: ActionDeps, caller: Caller, phone: str) -> bool:
    if caller.only_assigned_to is None:
        return True
    return await find_detail(deps.db, caller.workspace_id, phone, deps.clock.now(),
                             caller.only_assigned_to) is not None
