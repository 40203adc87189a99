"""The contact card: one actor per (workspace, phone), key `"<workspace_id>:<phone>"`, the single writer of
that contact's edits (create, fields, tags, custom attributes, consent).

Each write reads the row, applies the change in memory and writes it back with
`UPDATE ... WHERE version = <read version>`, bumping the version: the actor serialises writers in this
process, and the version fences writers in any other (one that lost the race gets `version_conflict` and
nothing changes). A client may name the version it last saw (`expected_version`); a stale one is refused the
same way. A write that would change nothing writes nothing: the version stays, so it cannot make other
clients' versions stale.

Events ride in the transaction of their change: `contact_created` when a contact is created, and one
`tag_added` per tag the contact did not have before (creation included). The write commits before the reply.

Creating a contact whose phone already has one updates it instead (an upsert): integrations sync contacts
from their own systems, often after the customer has already written (which creates the contact), and a
retried create must not fail. Fields left out keep their value; tags given are added, attributes merged.

Expected refusals (bad values, unknown contact, stale version) are replies (`ContactRefusal`), not crashes.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec

from inbox_actors.contacts.events import contact_event_data, tag_event_data
from inbox_actors.domain import contact_fields as fields
from inbox_actors.domain.events import CONTACT_CREATED, TAG_ADDED, new_correlation_id
from inbox_actors.runtime import Actor, ActorKind, ActorSystem, workspace_in_key
from inbox_actors.runtime.clock import Clock
from persistence.database import Database, Record, UnitOfWork
from persistence.queries import contacts as contact_queries
from persistence.queries import erasure as erasure_queries
from persistence.queries.outbox import append_event

KIND = "contact_card"

NOT_FOUND = "Contact not found"
CUSTOMER_WROTE_MEANWHILE = "The customer wrote while the contact was being deleted; delete it again."
VERSION_CONFLICT = "version_conflict"

# -- messages ------------------------------------------------------------------------------------------------

_Unset = msgspec.UnsetType
UNSET = msgspec.UNSET


class CreateContact(msgspec.Struct, frozen=True):
    """Create the contact, or update the one the phone already has with the fields given (UNSET: keep)."""

    name: str
    email: str | None | _Unset = UNSET
    company: str | None | _Unset = UNSET
    status: str | _Unset = UNSET
    tags: tuple[str, ...] = ()
    notes: str | None | _Unset = UNSET
    attributes: dict[str, Any] | _Unset = UNSET
    expected_version: int | None = None
    actor: str = "api"


class EditContact(msgspec.Struct, frozen=True):
    """Change an existing contact; every field left UNSET (or empty) is kept.

    `tags` replaces the set, `add_tags` adds, `remove_tag` removes one; `attributes` merges (None removes a
    key) and `remove_attribute` removes one; `opted_out` sets consent (opted_out_at is the moment it began).
    """

    name: str | _Unset = UNSET
    email: str | None | _Unset = UNSET
    company: str | None | _Unset = UNSET
    status: str | _Unset = UNSET
    notes: str | None | _Unset = UNSET
    tags: tuple[str, ...] | _Unset = UNSET
    add_tags: tuple[str, ...] = ()
    remove_tag: str | _Unset = UNSET
    attributes: dict[str, Any] | _Unset = UNSET
    remove_attribute: str | _Unset = UNSET
    opted_out: bool | _Unset = UNSET
    expected_version: int | None = None
    actor: str = "api"


# -- replies -------------------------------------------------------------------------------------------------


class ContactView(msgspec.Struct, frozen=True):
    phone: str
    name: str
    email: str | None
    company: str | None
    status: str
    tags: list[str]
    notes: str | None
    custom_attributes: dict[str, Any]
    opted_out: bool
    opted_out_at: datetime | None
    version: int
    created_at: datetime
    updated_at: datetime


class EraseContact(msgspec.Struct, frozen=True):
    """Delete the contact (its chat erased first by the chat's actor: conversations/contact_erasure.py)."""


class ContactErased(msgspec.Struct, frozen=True):
    contact_id: int


class ContactSaved(msgspec.Struct, frozen=True):
    contact: ContactView
    created: bool = False


class ContactRefusal(msgspec.Struct, frozen=True):
    """`code` None: a sentence error (`{error: sentence}`); otherwise the stable `{error: code, message}`."""

    status: int
    sentence: str
    code: str | None = None
    current_version: int | None = None


def contact_view(row: Record) -> ContactView:
    return ContactView(
        phone=row["phone"], name=row["name"], email=row["email"], company=row["company"], status=row["status"],
        tags=list(row["tags"] or []), notes=row["notes"], custom_attributes=contact_queries.contact_attributes(row),
        opted_out=row["opted_out"], opted_out_at=row["opted_out_at"], version=row["version"],
        created_at=row["created_at"], updated_at=row["updated_at"],
    )


def card_key(workspace_id: int, phone: str) -> str:
    """The actor key of a contact; `phone` normalised."""
    return f"{workspace_id}:{phone}"


# -- the actor -----------------------------------------------------------------------------------------------


class _Card(msgspec.Struct):
    """The editable state of a contact while a write is worked out."""

    name: str
    email: str | None
    company: str | None
    status: str
    tags: tuple[str, ...]
    notes: str | None
    custom_attributes: dict[str, Any]
    opted_out: bool
    opted_out_at: datetime | None

    @classmethod
    def of(cls, row: Record) -> _Card:
        return cls(name=row["name"], email=row["email"], company=row["company"], status=row["status"],
                   tags=tuple(row["tags"] or ()), notes=row["notes"],
                   custom_attributes=contact_queries.contact_attributes(row), opted_out=row["opted_out"],
                   opted_out_at=row["opted_out_at"])


class ContactCard(Actor):
    def __init__(self, key: str, db: Database, clock: Clock) -> None:
        super().__init__(key)
        workspace, _, phone = key.partition(":")
        self.workspace_id, self.phone = int(workspace), phone
        self._db, self._clock = db, clock

    async def receive(self, message: object) -> object:
        try:
            match message:
                case CreateContact():
                    return await self._create(message)
                case EditContact():
                    return await self._edit(message)
                case EraseContact():
                    return await self._erase()
        except fields.ContactFieldError as err:
            return ContactRefusal(400, str(err))
        raise TypeError(f"contact card cannot handle {type(message).__name__}")

    async def _create(self, request: CreateContact) -> ContactSaved | ContactRefusal:
        name = fields.contact_name(request.name)
        tags = fields.tag_list(request.tags)
        # An empty map on create means "none", not a refused empty merge.
        attributes = fields.attribute_changes(request.attributes) if request.attributes else None
        now = self._clock.now()
        async with self._db.transaction() as tx:
            existing = await contact_queries.find_contact(tx, self.workspace_id, self.phone)
            if existing is None:
                if request.expected_version is not None:
                    return ContactRefusal(412, f"This contact does not exist, so it is not at version "
                                          f"{request.expected_version}.", VERSION_CONFLICT)
                row = await contact_queries.insert_contact(
                    tx, workspace_id=self.workspace_id, phone=self.phone, name=name,
                    email=_given(fields.email, request.email, None),
                    company=_given(fields.company, request.company, None),
                    status=_given(fields.status, request.status, fields.DEFAULT_STATUS),
                    tags=list(tags), notes=_given(fields.notes, request.notes, None),
                    custom_attributes=fields.merge_attributes({}, attributes or {}), now=now,
                )
                if row is not None:
                    await self._emit(tx, request.actor, CONTACT_CREATED, contact_event_data(row))
                    await self._emit_tags(tx, request.actor, row, tags, now)
                    return ContactSaved(contact_view(row), created=True)
                # Created in between by another writer (a customer's first message): update it instead.
                existing = await contact_queries.find_contact(tx, self.workspace_id, self.phone)
                assert existing is not None
            edit = EditContact(name=name, email=request.email, company=request.company, status=request.status,
                               notes=request.notes, add_tags=tags,
                               attributes=UNSET if attributes is None else attributes,
                               expected_version=request.expected_version, actor=request.actor)
            return await self._apply(tx, existing, edit, now)

    async def _erase(self) -> ContactErased | ContactRefusal:
        async with self._db.transaction() as tx:
            erased = await erasure_queries.erase_contact(tx, self.workspace_id, self.phone)
            if erased is not None:
                return ContactErased(erased["id"])
            if await contact_queries.find_contact(tx, self.workspace_id, self.phone) is None:
                return ContactRefusal(404, NOT_FOUND)
        return ContactRefusal(409, CUSTOMER_WROTE_MEANWHILE)

    async def _edit(self, request: EditContact) -> ContactSaved | ContactRefusal:
        now = self._clock.now()
        async with self._db.transaction() as tx:
            row = await contact_queries.find_contact(tx, self.workspace_id, self.phone)
            if row is None:
                return ContactRefusal(404, NOT_FOUND)
            return await self._apply(tx, row, request, now)

    async def _apply(self, tx: UnitOfWork, row: Record, request: EditContact, now: datetime
                     ) -> ContactSaved | ContactRefusal:
        if request.expected_version is not None and request.expected_version != row["version"]:
            return _conflict(row["version"], request.expected_version)
        before = _Card.of(row)
        after, added = _changed(before, request, now)
        if after == before:
            return ContactSaved(contact_view(row))
        updated = await contact_queries.update_contact(
            tx, contact_id=row["id"], version=row["version"], name=after.name, email=after.email,
            company=after.company, status=after.status, tags=list(after.tags), notes=after.notes,
            custom_attributes=after.custom_attributes, opted_out=after.opted_out, opted_out_at=after.opted_out_at,
            now=now,
        )
        if updated is None:
            # Another process wrote the row since we read it: its version is the one that stands.
            current = await contact_queries.find_contact(tx, self.workspace_id, self.phone)
            if current is None:
                return ContactRefusal(404, NOT_FOUND)
            return _conflict(current["version"], row["version"])
        await self._emit_tags(tx, request.actor, updated, added, now)
        return ContactSaved(contact_view(updated))

    async def _emit_tags(self, tx: UnitOfWork, actor: str, row: Record, tags: tuple[str, ...], now: datetime
                         ) -> None:
        for tag in tags:
            await self._emit(tx, actor, TAG_ADDED, tag_event_data(row, tag, now))

    async def _emit(self, tx: UnitOfWork, actor: str, event: str, data: dict[str, Any]) -> None:
        await append_event(tx, workspace_id=self.workspace_id, event=event, actor=actor, data=data,
                           correlation_id=new_correlation_id())


def _changed(card: _Card, request: EditContact, now: datetime) -> tuple[_Card, tuple[str, ...]]:
    """The card after `request`, and the tags it gained. Raises ContactFieldError."""
    new = msgspec.structs.replace(card)
    if request.name is not UNSET:
        new.name = fields.contact_name(request.name)
    if request.email is not UNSET:
        new.email = fields.email(request.email)
    if request.company is not UNSET:
        new.company = fields.company(request.company)
    if request.status is not UNSET:
        new.status = fields.status(request.status)
    if request.notes is not UNSET:
        new.notes = fields.notes(request.notes)
    added: tuple[str, ...] = ()
    if request.tags is not UNSET:
        new.tags, added = fields.replace_tags(new.tags, request.tags)
    if request.add_tags:
        new.tags, more = fields.add_tags(new.tags, request.add_tags)
        added += more
    if request.remove_tag is not UNSET:
        new.tags = fields.remove_tag(new.tags, request.remove_tag)
    if request.attributes is not UNSET:
        new.custom_attributes = fields.merge_attributes(new.custom_attributes,
                                                        fields.attribute_changes(request.attributes))
    if request.remove_attribute is not UNSET:
        new.custom_attributes = fields.merge_attributes(
            new.custom_attributes, {fields.attribute_key(request.remove_attribute): None})
    if request.opted_out is not UNSET and request.opted_out != new.opted_out:
        # Opting out twice keeps the moment consent was first withdrawn.
        new.opted_out, new.opted_out_at = request.opted_out, (now if request.opted_out else None)
    return new, added


def _given(validate, value, default):
    return default if value is UNSET else validate(value)


def _conflict(current: int, named: int) -> ContactRefusal:
    return ContactRefusal(
        412, f"This contact was changed by someone else: it is at version {current}, not {named}. "
             "Fetch it again and retry.", VERSION_CONFLICT, current_version=current)


# -- kind and client API -------------------------------------------------------------------------------------


def contact_card_kind(db: Database, clock: Clock, *, idle_timeout: float = 300.0) -> ActorKind:
    # An ask ends at its deadline even while a write is under way; the write may still land, and the client
    # reads the contact (its version) before retrying, as after any lost answer.
    return ActorKind(name=KIND, factory=lambda key: ContactCard(key, db, clock), mailbox_capacity=64,
                     idle_timeout=idle_timeout, workspace_of=workspace_in_key)


async def change_contact(actors: ActorSystem, workspace_id: int, phone: str,
                         request: CreateContact | EditContact) -> ContactSaved | ContactRefusal:
    """Send a contact write to its card (`phone` normalised); returns the saved contact or a ContactRefusal."""
    return await actors.ref(KIND, card_key(workspace_id, phone)).ask(request)  # type: ignore[return-value]
