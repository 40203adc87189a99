"""The contact removal use cases at their own level: deleting needs contacts_delete and exporting
contacts_export; a phone that is none names no contact; a bulk deletion answers each phone; an export is a stream
read only as the door sends it. The routes' tests (e2e/test_contact_removal.py) check how they answer."""

from __future__ import annotations

import json

from inbox_actors.use_cases import contact_removal, contacts
from inbox_actors.use_cases.outcomes import Done, Reason, Refused

PHONE, OTHER = "919833300001", "919833300002"


async def made(use_cases, caller, phone: str, name: str = "Asha") -> None:
    outcome = await use_cases.run(caller, contacts.CREATE, {"phone": phone, "name": name})
    assert isinstance(outcome, Done), outcome


async def test_deleting_needs_contacts_delete_and_exporting_contacts_export(use_cases):
    editor = await use_cases.member(permissions=["contacts"])
    await made(use_cases, editor, PHONE)
    for use_case, arguments in ((contact_removal.DELETE, {"phone": PHONE}),
                                (contact_removal.BULK_DELETE, {"phones": [PHONE]}),
                                (contact_removal.EXPORT, {})):
        outcome = await use_cases.run(editor, use_case, arguments)
        assert isinstance(outcome, Refused) and (outcome.status, outcome.code) == (403, "permission_denied")
        assert use_case.name in outcome.message and not use_case.allows(editor)
    assert await use_cases.db.fetchval("SELECT count(*) FROM contacts WHERE workspace_id = $1",
                                       use_cases.workspace_id) == 1


async def test_field_rules_answer_their_codes_and_the_spec_s_sentences(use_cases):
    remover = await use_cases.member(permissions=["contacts_delete", "contacts_export"])
    fmt = await use_cases.run(remover, contact_removal.EXPORT, {"format": "xml"})
    assert isinstance(fmt, Refused) and (fmt.status, fmt.code, fmt.message) == (
        400, "invalid_format", "format must be csv or jsonl.")
    for phones in ([], [PHONE] * 501, ["x" * 33]):
        outcome = await use_cases.run(remover, contact_removal.BULK_DELETE, {"phones": phones})
        assert isinstance(outcome, Refused) and (outcome.status, outcome.code) == (400, "invalid_phones")
    for phone in ("12", "not a phone", PHONE):
        outcome = await use_cases.run(remover, contact_removal.DELETE, {"phone": phone})
        assert isinstance(outcome, Refused) and (outcome.status, outcome.message) == (404, "Contact not found")
        assert (outcome.code, outcome.reason) == ("not_found", Reason.NOT_FOUND)
    missing = await use_cases.run(remover, contact_removal.DELETE, {})
    assert isinstance(missing, Refused) and missing.code == "invalid_arguments"


async def test_deleting_one_or_many_and_exporting_what_is_left(use_cases):
    admin = await use_cases.member(role="admin")
    for phone in (PHONE, OTHER, "919833300003"):
        await made(use_cases, admin, phone, name=f"Name {phone[-1]}")
    deleted = await use_cases.run(admin, contact_removal.DELETE, {"phone": f"+{PHONE}"})
    assert isinstance(deleted, Done) and (deleted.data.phone, deleted.data.deleted) == (PHONE, True)
    bulk = await use_cases.run(admin, contact_removal.BULK_DELETE, {"phones": [OTHER, OTHER, PHONE, "12"]})
    assert isinstance(bulk, Done) and bulk.data.deleted == 1
    assert [(r.phone, r.deleted, r.status) for r in bulk.data.results] == [
        (OTHER, True, 200), (PHONE, False, 404), ("12", False, 400)]

    exported = await use_cases.run(admin, contact_removal.EXPORT, {"format": "jsonl"})
    assert isinstance(exported, Done)
    assert exported.data.filename == f"contacts-{use_cases.workspace_id}.jsonl"
    assert exported.data.content_type == "application/x-ndjson"
    lines = b"".join([chunk async for chunk in exported.data.chunks]).splitlines()
    assert [json.loads(line)["phone"] for line in lines] == ["919833300003"]
    csv = await use_cases.run(admin, contact_removal.EXPORT, {})
    assert isinstance(csv, Done) and csv.data.filename.endswith(".csv")
    assert csv.data.content_type.startswith("text/csv")


async def test_an_assigned_only_member_deletes_only_the_contacts_of_its_chats(use_cases):
    admin = await use_cases.member(role="admin")
    limited = await use_cases.member(permissions=["contacts_delete", "inbox"], assigned_only=True)
    await use_cases.customer_writes(PHONE)
    outcome = await use_cases.run(limited, contact_removal.DELETE, {"phone": PHONE})
    assert isinstance(outcome, Refused) and (outcome.status, outcome.message) == (404, "Contact not found")
    assert isinstance(await use_cases.run(admin, contact_removal.DELETE, {"phone": PHONE}), Done)
