"""Deleting and exporting contacts as use cases: one contact deleted, up to 500 in one call, every contact
exported.

A deletion is `contacts.erase`'s (the chat and the contact for good, by their single writers; a caller limited to
assigned chats deletes only the contacts of those). A bulk deletion answers each phone's outcome rather than a
refusal: one phone that cannot go does not keep the others. An export is a stream, CSV or JSON lines, read page by
page as the door sends it (`contacts/export.py`). Deleting needs `contacts_delete`, exporting `contacts_export`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Annotated, Literal

import msgspec

from inbox_actors.contacts import export
from inbox_actors.conversations.contact_erasure import MAX_BULK, ContactDeleted
from inbox_actors.domain.phones import phone_or_none
from inbox_actors.use_cases import permissions
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.contacts import CONTACT_NOT_FOUND, erase
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.outcomes import Done, Outcome, Reason, Refused, reason_of_status
from inbox_actors.use_cases.use_case import Kind, UseCase, rule

RawPhone = Annotated[str, msgspec.Meta(min_length=1, max_length=32)]
"""A phone as the caller wrote it (a leading + and spaces allowed); each is judged as its own deletion."""
_CODES = {400: "invalid_phone", 404: "not_found"}  # a deletion refused, by its status (for doors that answer codes)


class DeleteContact(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    phone: str
    """As the caller wrote it: one that is no phone number names no contact (not found)."""


class BulkDelete(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    phones: Annotated[list[RawPhone], msgspec.Meta(
        min_length=1, max_length=MAX_BULK,
        extra=rule("invalid_phones", f"phones must be 1 to {MAX_BULK} phone numbers, each at most 32 characters."))]


class BulkDeleted(msgspec.Struct, frozen=True):
    deleted: int
    results: list[ContactDeleted]


class ExportContacts(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    format: Annotated[Literal["csv", "jsonl"], msgspec.Meta(extra=rule("invalid_format",
                                                                       "format must be csv or jsonl."))] = "csv"


@dataclass(frozen=True)
class ContactExport:
    """What the door streams: nothing is read until it iterates `chunks`."""

    filename: str
    content_type: str
    chunks: AsyncIterator[bytes]


async def _delete(deps: UseCaseDeps, caller: Caller, a: DeleteContact) -> Outcome:
    if phone_or_none(a.phone) is None:
        return Refused(Reason.NOT_FOUND, CONTACT_NOT_FOUND, 404, "not_found")
    deleted = await erase(deps, caller, a.phone)
    if not deleted.deleted:
        return Refused(reason_of_status(deleted.status), deleted.error or CONTACT_NOT_FOUND, deleted.status,
                       _CODES.get(deleted.status, "contact_refused"))
    return Done(deleted)


async def _bulk_delete(deps: UseCaseDeps, caller: Caller, a: BulkDelete) -> Outcome:
    results = [await erase(deps, caller, raw) for raw in dict.fromkeys(a.phones)]  # a phone given twice goes once
    return Done(BulkDeleted(sum(result.deleted for result in results), results))


async def _export(deps: UseCaseDeps, caller: Caller, a: ExportContacts) -> Outcome:
    return Done(ContactExport(f"contacts-{caller.workspace_id}.{a.format}", export.FORMATS[a.format],
                              export.export(deps.db, caller.workspace_id, a.format)))


# -- the declarations ----------------------------------------------------------------------------------------

DELETE = UseCase("delete_contact", DeleteContact, permissions.CONTACTS_DELETE, Kind.WRITE, _delete)
BULK_DELETE = UseCase("bulk_delete_contacts", BulkDelete, permissions.CONTACTS_DELETE, Kind.WRITE, _bulk_delete)
EXPORT = UseCase("export_contacts", ExportContacts, permissions.CONTACTS_EXPORT, Kind.READ, _export)
