"""The label set's use cases at their own level: the runner's permission and argument checks, then creating,
listing, renaming and deleting a label on a real PostgreSQL, no HTTP. The routes' and pages' tests (e2e) check how
they answer."""

from __future__ import annotations

from inbox_actors.labels.label_set import MAX_NAME
from inbox_actors.use_cases import labels
from inbox_actors.use_cases.outcomes import Done, Reason, Refused


def refused(outcome, status: int, code: str) -> Refused:
    assert isinstance(outcome, Refused) and (outcome.status, outcome.code) == (status, code), outcome
    return outcome


async def test_reading_needs_what_reading_chats_does_and_changing_needs_settings(use_cases):
    reader = await use_cases.member(permissions=["contacts"])
    assert labels.LIST.allows(reader) and not labels.CREATE.allows(reader)
    assert isinstance(await use_cases.run(reader, labels.LIST, {}), Done)
    for use_case, arguments in ((labels.CREATE, {"name": "vip"}), (labels.CHANGE, {"label_id": 1, "name": "x"}),
                                (labels.DELETE, {"label_id": 1})):
        outcome = refused(await use_cases.run(reader, use_case, arguments), 403, "permission_denied")
        assert outcome.reason is Reason.PERMISSION and f"{use_case.name} needs the settings" in outcome.message
    outsider = await use_cases.member(permissions=["campaigns"])
    refused(await use_cases.run(outsider, labels.LIST, {}), 403, "permission_denied")
    assert await use_cases.db.fetchval("SELECT count(*) FROM labels WHERE workspace_id = $1",
                                       use_cases.workspace_id) == 0


async def test_arguments_are_checked_by_the_declared_structs_and_the_set_s_rules(use_cases):
    admin = await use_cases.member(role="admin")
    for arguments in ({"name": "x" * (MAX_NAME + 1)}, {"name": "vip", "colour": "red"}, {"name": "a\x07"},
                      {"name": "vip", "extra": 1}, {}):
        refused(await use_cases.run(admin, labels.CREATE, arguments), 400, "invalid_arguments")
    refused(await use_cases.run(admin, labels.CREATE, {"name": "   "}), 400, "invalid_name")
    refused(await use_cases.run(admin, labels.CHANGE, {"label_id": "1"}), 400, "invalid_arguments")
    # An id no label can have is no such label, as a missing one is.
    for label_id in (0, 999_999, 2**70):
        refused(await use_cases.run(admin, labels.DELETE, {"label_id": label_id}), 404, "not_found")
        refused(await use_cases.run(admin, labels.CHANGE, {"label_id": label_id, "name": "x"}), 404, "not_found")


async def test_an_admin_creates_renames_and_deletes_a_label(use_cases):
    admin = await use_cases.member(role="admin")
    created = await use_cases.run(admin, labels.CREATE, {"name": "  VIP   customer ", "colour": "#2563EB"})
    assert isinstance(created, Done) and (created.data.name, created.data.colour) == ("VIP customer", "#2563eb")
    refused(await use_cases.run(admin, labels.CREATE, {"name": "vip CUSTOMER"}), 409, "label_exists")
    # A form sends text: not strict, as the pages run it.
    grey = await use_cases.run(admin, labels.CREATE, {"name": "Later"}, strict=False)
    assert isinstance(grey, Done) and grey.data.colour == "#6b7280"

    label_id = created.data.id
    renamed = await use_cases.run(admin, labels.CHANGE, {"label_id": label_id, "name": "Gold"})
    assert isinstance(renamed, Done) and (renamed.data.name, renamed.data.colour) == ("Gold", "#2563eb")
    refused(await use_cases.run(admin, labels.CHANGE, {"label_id": label_id, "name": "later"}), 409, "label_exists")
    listed = await use_cases.run(admin, labels.LIST, {})
    assert isinstance(listed, Done) and [label.name for label in listed.data.data] == ["Gold", "Later"]

    deleted = await use_cases.run(admin, labels.DELETE, {"label_id": label_id})
    assert isinstance(deleted, Done) and (deleted.data.name, deleted.data.removed_from_chats) == ("Gold", 0)
    refused(await use_cases.run(admin, labels.DELETE, {"label_id": label_id}), 404, "not_found")
    actions = await use_cases.db.fetch("SELECT action FROM team_audit WHERE workspace_id = $1 "
                                       "AND action LIKE 'label.%' ORDER BY id", use_cases.workspace_id)
    assert [row["action"] for row in actions] == ["label.created", "label.created", "label.changed",
                                                  "label.deleted"]
