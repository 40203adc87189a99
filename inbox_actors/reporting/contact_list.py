"""The contact list (`GET /api/contacts/paginated`) and one contact (`GET /api/contacts/{phone}`).

The list is numbered pages, as the spec defines it (page, limit, meta.total, meta.hasMore); newest activity
first, contacts without a chat after those with one, newest first. `search` matches the name, the phone, the
tags and the text of the contact's messages, anywhere in each (trigram indexes keep that fast).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Mapping

import msgspec

from inbox_actors.contacts.contact_card import ContactView, contact_view
from inbox_actors.domain.phones import phone_or_none
from inbox_actors.paging import parameters
from persistence.database import Database, Record
from persistence.queries import chat_visibility
from persistence.queries.contacts import contact_attributes
from persistence.queries.reporting import contacts as queries

DEFAULT_LIMIT = 50


class ContactItem(msgspec.Struct, frozen=True):
    """The spec's Contact list item; tags as one comma-separated string."""

    phone: str
    name: str
    email: str | None
    company: str | None
    status: str
    tags: str
    notes: str | None
    chat_status: str | None
    custom_attributes: dict[str, Any]
    last_msg_time: datetime | None
    claimed_by: int | None
    claimed_by_name: str | None


class Meta(msgspec.Struct, frozen=True):
    total: int
    page: int
    limit: int
    hasMore: bool


class ContactPage(msgspec.Struct, frozen=True):
    success: bool
    contacts: list[ContactItem]
    meta: Meta


class ContactWithChat(ContactView, frozen=True):
    """One contact: as the contact writes answer it, plus its chat's status and who claimed it."""

    chat_status: str | None
    last_msg_time: datetime | None
    claimed_by: int | None
    claimed_by_name: str | None


class ContactNotFound(LookupError):
    """No such contact in the workspace, or not visible to the caller."""


def _item(row: Record) -> ContactItem:
    return ContactItem(
        phone=row["phone"], name=row["name"], email=row["email"], company=row["company"], status=row["status"],
        tags=",".join(row["tags"]), notes=row["notes"], chat_status=row["chat_status"],
        custom_attributes=contact_attributes(row), last_msg_time=row["last_msg_time"],
        claimed_by=row["claimed_by"], claimed_by_name=row["claimed_by_name"],
    )


async def contact_page(db: Database, workspace_id: int, args: Mapping[str, str | None],
                       restricted_to: int | None) -> ContactPage:
    page = parameters.page(args.get("page"))
    limit = parameters.limit(args.get("limit"), DEFAULT_LIMIT)
    search = parameters.search(args.get("search"), "search")
    total, rows = await queries.contact_page(db, workspace_id, search=search, restricted_to=restricted_to,
                                             offset=(page - 1) * limit, limit=limit)
    return ContactPage(True, [_item(row) for row in rows],
                       Meta(total=total, page=page, limit=limit, hasMore=page * limit < total))


async def one_contact(db: Database, workspace_id: int, raw_phone: str,
                      restricted_to: int | None) -> ContactWithChat:
    phone = phone_or_none(raw_phone)
    row = await queries.one_contact(db, workspace_id, phone) if phone is not None else None
    if row is None or not await chat_visibility.may_see(db, row, restricted_to):
        raise ContactNotFound(raw_phone)
    return ContactWithChat(**msgspec.structs.asdict(contact_view(row)), chat_status=row["chat_status"],
                           last_msg_time=row["last_msg_time"], claimed_by=row["claimed_by"],
                           claimed_by_name=row["claimed_by_name"])
