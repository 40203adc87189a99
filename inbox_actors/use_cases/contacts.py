"""A contact's writes through its contact card actor, and its erasure, with the one rule around them: a caller
limited to assigned chats edits or deletes only the contacts of those chats (any other is "Contact not found", as
the contact reads answer). The card's own refusals (a field's rule, a version conflict) come back as its
`ContactRefusal`, which carries what each front door needs to answer them (the spec's sentence, or a stable code
and the current version)."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from inbox_actors.contacts import contact_card
from inbox_actors.contacts.contact_card import UNSET, ContactRefusal, ContactSaved, CreateContact, EditContact
from inbox_actors.conversations import contact_erasure
from inbox_actors.conversations.contact_erasure import ContactDeleted
from inbox_actors.domain import contact_fields
from inbox_actors.domain.phones import InvalidPhone, normalise_phone
from inbox_actors.reporting import contact_list
from inbox_actors.reporting.conversation_detail import find_detail
from inbox_actors.use_cases import permissions
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.fields import FILLED_LINE, MULTI_LINE, ONE_LINE, Phone, Tag
from inbox_actors.use_cases.outcomes import Done, Outcome, Reason, Refused, reason_of_status
from inbox_actors.use_cases.use_case import Kind, UseCase, rule

CONTACT_NOT_FOUND = "Contact not found"  # the spec's sentence
VERSION_CONFLICT = ("Someone else changed this contact while you were editing it. The card shows their version; "
                    "nothing you typed was saved, so make your change again on it.")

# The contact card's rules, stated in the schema so that what it calls valid is what the card takes: a name or
# status on one line and not blank once trimmed; custom attributes' names and values as it stores them.
ContactName = Annotated[str, msgspec.Meta(min_length=1, max_length=contact_fields.MAX_NAME, pattern=FILLED_LINE,
                                          description="The contact's name.")]
Email = Annotated[str, msgspec.Meta(max_length=contact_fields.MAX_EMAIL,
                                    pattern=contact_fields.EMAIL_OR_EMPTY_PATTERN,
                                    description="Email address; an empty string clears it.")]
Company = Annotated[str, msgspec.Meta(max_length=contact_fields.MAX_COMPANY, pattern=ONE_LINE,
                                      description="Company; an empty string clears it.")]
ContactStatus = Annotated[str, msgspec.Meta(min_length=1, max_length=contact_fields.MAX_STATUS, pattern=FILLED_LINE,
                                            description="The contact's status in the team's pipeline (New, Lead, "
                                                        "Customer...).")]
Notes = Annotated[str, msgspec.Meta(max_length=contact_fields.MAX_NOTES, pattern=MULTI_LINE,
                                    description="Free notes about the contact; an empty string clears them.")]
AttributeName = Annotated[str, msgspec.Meta(max_length=contact_fields.MAX_ATTRIBUTE_KEY, pattern=FILLED_LINE)]
_EXACT = contact_fields.MAX_ATTRIBUTE_INTEGER  # beyond it a number would not come back as sent
AttributeValue = (Annotated[str, msgspec.Meta(max_length=contact_fields.MAX_ATTRIBUTE_TEXT, pattern=r"^[^\x00]*$")]
                  | Annotated[int, msgspec.Meta(ge=-_EXACT, le=_EXACT)]
                  | Annotated[float, msgspec.Meta(ge=-_EXACT, le=_EXACT)] | bool)
CHANGEABLE = ("name", "email", "company", "status", "notes", "attributes")


class OneContact(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    phone: Phone


class ContactTag(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    phone: Phone
    tag: Tag


class CreateContactArgs(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    phone: Phone
    name: ContactName
    email: Email | None = None
    company: Company | None = None
    status: ContactStatus | None = None
    tags: Annotated[list[Tag], msgspec.Meta(max_length=contact_fields.MAX_TAGS,
                                            description="Tags to add (the contact's other tags are kept).")] = []
    notes: Notes | None = None
    attributes: Annotated[dict[AttributeName, AttributeValue], msgspec.Meta(
        max_length=contact_fields.MAX_ATTRIBUTES,
        description="Custom attributes to set (merged into the contact's others).")] | None = None


class UpdateContactArgs(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    phone: Phone
    name: ContactName | None = None
    email: Email | None = None
    company: Company | None = None
    status: ContactStatus | None = None
    notes: Notes | None = None
    attributes: Annotated[dict[AttributeName, AttributeValue | None], msgspec.Meta(
        min_length=1, max_length=contact_fields.MAX_ATTRIBUTES,
        description="Custom attributes to merge in; null removes one.")] | None = None


class CardChange(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A change as the contact card takes it, read from the spec's contact routes (whose bodies and sentences are
    the spec's own): its rules are the card's (`domain/contact_fields.py`)."""

    phone: str
    create: CreateContact | None = None
    """A create (an existing contact is updated); else `edit`."""
    edit: EditContact | None = None


class ContactByPhone(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A contact looked up by its phone as the caller spelt it: text that is no phone finds no contact."""

    phone: str


class ContactQuery(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The contact list's query parameters as sent (`page`, `limit`, `search`)."""

    query: dict[str, str] = {}


class EditCard(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The whole card as a person edits it in the app, against the version it was shown with (`version`): a
    change someone made meanwhile is never overwritten. Its fields are judged by the card itself, in the card's
    words (`domain/contact_fields.py`); an empty email, company or notes clears it; `attribute` sets one custom
    attribute, or removes it when its value is empty."""

    phone: Phone
    version: Annotated[int, msgspec.Meta(ge=0, extra=rule("invalid_arguments", "Reload the page and edit the "
                                                                               "contact again."))]
    name: str
    status: str
    email: str = ""
    company: str = ""
    notes: str = ""
    tags: list[str] = []
    opted_out: bool = False
    attribute: tuple[str, str] | None = None


async def change(deps: UseCaseDeps, caller: Caller, raw_phone: str, edit: CreateContact | EditContact
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


async def erase(deps: UseCaseDeps, caller: Caller, raw_phone: str) -> ContactDeleted:
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


def card_refusal(refused: ContactRefusal) -> Refused:
    sentence = refused.sentence if refused.sentence.endswith(".") else f"{refused.sentence}."
    return Refused(reason_of_status(refused.status), sentence, refused.status, refused.code or "contact_refused")


async def _saved(deps: UseCaseDeps, caller: Caller, raw_phone: str, edit: CreateContact | EditContact) -> Outcome:
    reply = await change(deps, caller, raw_phone, edit)
    if isinstance(reply, Refused):
        return reply
    if isinstance(reply, ContactRefusal):
        return card_refusal(reply)
    if isinstance(edit, CreateContact):
        return Done({"contact": reply.contact, "created": reply.created})
    return Done(reply.contact)


async def _change(deps: UseCaseDeps, caller: Caller, a: CardChange) -> Outcome:
    """The card's answer as it is: a `ContactRefusal` carries what the spec's routes answer (its sentence, a
    stable code and the current version), which a `Refused` would not keep."""
    requested = a.create or a.edit
    if requested is None:
        return Refused(Reason.INVALID, "Give the change to make: a create or an edit.", 400, "invalid_arguments")
    reply = await change(deps, caller, a.phone, requested)
    return reply if isinstance(reply, Refused) else Done(reply)


async def _list(deps: UseCaseDeps, caller: Caller, a: ContactQuery) -> Outcome:
    return Done(await contact_list.contact_page(deps.db, caller.workspace_id, a.query, caller.restricted_to))


async def _show(deps: UseCaseDeps, caller: Caller, a: ContactByPhone) -> Outcome:
    try:
        return Done(await contact_list.one_contact(deps.db, caller.workspace_id, a.phone, caller.restricted_to))
    except contact_list.ContactNotFound:
        return Refused(Reason.NOT_FOUND, CONTACT_NOT_FOUND, 404, "not_found")


async def _create(deps: UseCaseDeps, caller: Caller, a: CreateContactArgs) -> Outcome:
    return await _saved(deps, caller, a.phone, CreateContact(
        name=a.name, email=_kept(a.email), company=_kept(a.company), status=_kept(a.status), tags=tuple(a.tags),
        notes=_kept(a.notes), attributes=_kept(a.attributes), actor=caller.author))


async def _update(deps: UseCaseDeps, caller: Caller, a: UpdateContactArgs) -> Outcome:
    changes = {name: value for name in CHANGEABLE if (value := getattr(a, name)) is not None}
    if not changes:
        return Refused(Reason.INVALID, "Nothing to change: give at least one of name, email, company, status, "
                       "notes, attributes.", 400, "invalid_arguments")
    return await _saved(deps, caller, a.phone, EditContact(**changes, actor=caller.author))


async def _edit_card(deps: UseCaseDeps, caller: Caller, a: EditCard) -> Outcome:
    attributes = {} if a.attribute is None else {"attributes": {a.attribute[0]: a.attribute[1] or None}}
    outcome = await _saved(deps, caller, a.phone, EditContact(
        name=a.name.strip(), email=a.email.strip() or None, company=a.company.strip() or None,
        status=a.status.strip(), notes=a.notes.strip() or None, tags=tuple(t.strip() for t in a.tags),
        opted_out=a.opted_out, expected_version=a.version, actor=caller.author, **attributes))
    if isinstance(outcome, Refused) and outcome.code == "version_conflict":
        return Refused(Reason.REFUSED, VERSION_CONFLICT, outcome.status, outcome.code)
    return outcome


async def _opt_out(deps: UseCaseDeps, caller: Caller, a: OneContact) -> Outcome:
    return await _saved(deps, caller, a.phone, EditContact(opted_out=True, actor=caller.author))


async def _opt_in(deps: UseCaseDeps, caller: Caller, a: OneContact) -> Outcome:
    return await _saved(deps, caller, a.phone, EditContact(opted_out=False, actor=caller.author))


async def _add_tag(deps: UseCaseDeps, caller: Caller, a: ContactTag) -> Outcome:
    return await _saved(deps, caller, a.phone, EditContact(add_tags=(a.tag,), actor=caller.author))


async def _remove_tag(deps: UseCaseDeps, caller: Caller, a: ContactTag) -> Outcome:
    return await _saved(deps, caller, a.phone, EditContact(remove_tag=a.tag, actor=caller.author))


def _kept(value: Any) -> Any:
    """A field the caller left out keeps its value on an existing contact."""
    return UNSET if value is None else value


async def _visible(deps: UseCaseDeps, caller: Caller, phone: str) -> bool:
    if caller.restricted_to is None:
        return True
    return await find_detail(deps.db, caller.workspace_id, phone, deps.clock.now(),
                             caller.restricted_to) is not None


# -- the declarations ----------------------------------------------------------------------------------------

LIST = UseCase("list_contacts", ContactQuery, permissions.CONTACTS, Kind.READ, _list)
SHOW = UseCase("get_contact", ContactByPhone, permissions.CONTACTS, Kind.READ, _show)
CHANGE = UseCase("change_contact", CardChange, permissions.CONTACTS, Kind.WRITE, _change)
CREATE = UseCase("create_contact", CreateContactArgs, permissions.CONTACTS, Kind.WRITE, _create)
UPDATE = UseCase("update_contact", UpdateContactArgs, permissions.CONTACTS, Kind.WRITE, _update)
EDIT_CARD = UseCase("edit_contact_card", EditCard, permissions.CONTACTS, Kind.WRITE, _edit_card)
OPT_OUT = UseCase("opt_out_contact", OneContact, permissions.CONTACTS, Kind.WRITE, _opt_out)
OPT_IN = UseCase("opt_in_contact", OneContact, permissions.CONTACTS, Kind.WRITE, _opt_in)
ADD_TAG = UseCase("add_tag", ContactTag, permissions.CONTACTS, Kind.WRITE, _add_tag)
REMOVE_TAG = UseCase("remove_tag", ContactTag, permissions.CONTACTS, Kind.WRITE, _remove_tag)
