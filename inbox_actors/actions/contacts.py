"""A contact's writes through its contact card actor, with the one rule around it: a caller limited to assigned
chats edits only the contacts of those chats (any other is "Contact not found", as the contact reads answer).
The card's own refusals (a field's rule, a version conflict) come back as its `ContactRefusal`, which carries
what each front door needs to answer them (the spec's sentence, or a stable code and the current version)."""

from __future__ import annotations

from inbox_actors.actions.caller import Caller
from inbox_actors.actions.deps import ActionDeps
from inbox_actors.actions.outcomes import Reason, Refused
from inbox_actors.contacts import contact_card
from inbox_actors.contacts.contact_card import ContactSaved, ContactRefusal, CreateContact, EditContact
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
    if caller.only_assigned_to is not None:
        visible = await find_detail(deps.db, caller.workspace_id, phone, deps.clock.now(), caller.only_assigned_to)
        if visible is None:
            return Refused(Reason.NOT_FOUND, CONTACT_NOT_FOUND, 404, "not_found")
    return await contact_card.change_contact(deps.actors, caller.workspace_id, phone, edit)  # type: ignore[arg-type]
