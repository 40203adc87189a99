"""The canned responses' use cases and a member's time zone at their own level: the runner's permission and
argument checks, then adding, listing, changing and removing a canned response on a real PostgreSQL, no HTTP. The
route's and the pages' tests (e2e) check how they answer."""

from __future__ import annotations

from inbox_actors.canned_responses import placeholders
from inbox_actors.canned_responses.canned_set import MAX_SHORTCUT, MAX_TITLE
from inbox_actors.use_cases import canned_responses, member_settings
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.outcomes import Done, Reason, Refused
from tests import builders

HELLO = {"shortcut": "hello", "title": "Greeting", "text": "Hello {{first_name}}, {{agent}} here."}


def refused(outcome, status: int, code: str) -> Refused:
    assert isinstance(outcome, Refused) and (outcome.status, outcome.code) == (status, code), outcome
    return outcome


async def test_whoever_may_reply_reads_them_and_only_settings_changes_them(use_cases):
    admin = await use_cases.member(role="admin")
    added = await use_cases.run(admin, canned_responses.ADD, HELLO)
    assert isinstance(added, Done)
    for permissions in (["inbox"], ["inbox:read"]):
        reader = await use_cases.member(permissions=permissions)
        listed = await use_cases.run(reader, canned_responses.LIST, {})
        assert isinstance(listed, Done) and [c.shortcut for c in listed.data.data] == ["hello"]
        for use_case, arguments in ((canned_responses.ADD, {**HELLO, "shortcut": "bye"}),
                                    (canned_responses.CHANGE, {"canned_id": added.data.id, "title": "x"}),
                                    (canned_responses.REMOVE, {"canned_id": added.data.id})):
            outcome = refused(await use_cases.run(reader, use_case, arguments), 403, "permission_denied")
            assert outcome.reason is Reason.PERMISSION and f"{use_case.name} needs the settings" in outcome.message
    # Reading them is what replying needs: the contacts permission alone does not reply.
    outsider = await use_cases.member(permissions=["contacts", "campaigns"])
    refused(await use_cases.run(outsider, canned_responses.LIST, {}), 403, "permission_denied")
    settings = await use_cases.member(permissions=["settings"])
    assert isinstance(await use_cases.run(settings, canned_responses.ADD, {**HELLO, "shortcut": "bye"}), Done)
    assert canned_responses.LIST.permissions == ("inbox",)


async def test_the_fields_are_checked_by_the_declared_structs_with_their_own_codes(use_cases):
    admin = await use_cases.member(role="admin")
    broken = (({"shortcut": "/hello"}, "invalid_shortcut"), ({"shortcut": "two words"}, "invalid_shortcut"),
              ({"shortcut": "x" * (MAX_SHORTCUT + 1)}, "invalid_shortcut"), ({"shortcut": ""}, "invalid_shortcut"),
              ({"title": "x" * (MAX_TITLE + 1)}, "invalid_title"), ({"title": "   "}, "invalid_title"),
              ({"title": "two\nlines"}, "invalid_title"), ({"text": ""}, "invalid_text"),
              ({"text": "x" * 4097}, "invalid_text"), ({"text": "bell \x07"}, "invalid_text"),
              ({"text": "  \n\t "}, "invalid_text"), ({"extra": 1}, "invalid_arguments"))
    for changes, code in broken:
        refused(await use_cases.run(admin, canned_responses.ADD, {**HELLO, **changes}), 400, code)
    refused(await use_cases.run(admin, canned_responses.ADD, {"shortcut": "hello"}), 400, "invalid_arguments")
    # An id no canned response can have is no such canned response, as a missing one is.
    for canned_id in (0, 999_999, 2**70):
        refused(await use_cases.run(admin, canned_responses.REMOVE, {"canned_id": canned_id}), 404, "not_found")
        refused(await use_cases.run(admin, canned_responses.CHANGE, {"canned_id": canned_id, "title": "x"}), 404,
                "not_found")
    assert await use_cases.db.fetchval("SELECT count(*) FROM canned_responses WHERE workspace_id = $1",
                                       use_cases.workspace_id) == 0


async def test_a_shortcut_is_unique_in_its_workspace_whatever_its_case(use_cases):
    admin = await use_cases.member(role="admin")
    added = await use_cases.run(admin, canned_responses.ADD, {**HELLO, "title": "  Greeting   first "})
    assert isinstance(added, Done) and (added.data.shortcut, added.data.title) == ("hello", "Greeting first")
    assert added.data.created_by == added.data.updated_by == admin.member_id
    refused(await use_cases.run(admin, canned_responses.ADD, {**HELLO, "shortcut": "HELLO"}), 409, "shortcut_taken")
    # Another workspace's same shortcut is theirs.
    other = await use_cases.member(role="admin", workspace_id=await builders.workspace(use_cases.db))
    assert isinstance(await use_cases.run(other, canned_responses.ADD, HELLO), Done)

    late = await use_cases.run(admin, canned_responses.ADD,
                               {"shortcut": "order-late", "title": "Late order", "text": "Sorry {{name}}!"})
    assert isinstance(late, Done)
    refused(await use_cases.run(admin, canned_responses.CHANGE, {"canned_id": late.data.id, "shortcut": "Hello"}),
            409, "shortcut_taken")
    # Its own shortcut in another case is a change of case, and fields left out keep their values.
    editor = await use_cases.member(permissions=["settings"])
    cased = await use_cases.run(editor, canned_responses.CHANGE, {"canned_id": late.data.id, "shortcut": "Order-Late"})
    assert isinstance(cased, Done) and (cased.data.shortcut, cased.data.title, cased.data.text) == (
        "Order-Late", "Late order", "Sorry {{name}}!")
    assert cased.data.updated_by == editor.member_id and cased.data.created_by == admin.member_id
    listed = await use_cases.run(admin, canned_responses.LIST, {})
    assert [c.shortcut for c in listed.data.data] == ["hello", "Order-Late"]

    removed = await use_cases.run(admin, canned_responses.REMOVE, {"canned_id": added.data.id})
    assert isinstance(removed, Done) and removed.data.shortcut == "hello"
    refused(await use_cases.run(admin, canned_responses.REMOVE, {"canned_id": added.data.id}), 404, "not_found")
    # Its shortcut is free again.
    assert isinstance(await use_cases.run(admin, canned_responses.ADD, HELLO), Done)
    actions = await use_cases.db.fetch("SELECT action FROM team_audit WHERE workspace_id = $1 "
                                       "AND action LIKE 'canned_response.%' ORDER BY id", use_cases.workspace_id)
    assert [row["action"] for row in actions] == ["canned_response.added", "canned_response.added",
                                                  "canned_response.changed", "canned_response.removed",
                                                  "canned_response.added"]


async def test_the_operator_adds_one_in_nobodys_name(use_cases):
    operator = Caller.operator(use_cases.workspace_id)
    added = await use_cases.run(operator, canned_responses.ADD, HELLO)
    assert isinstance(added, Done) and added.data.created_by is None


def test_placeholders_are_filled_with_the_contact_s_and_the_member_s_names():
    text = "Hi {{name}} / {{ first_name }} — {{agent}} here. {{unknown}}"
    assert placeholders.fill(text, placeholders.values("  Asha   Rao ", "Raj")) == (
        "Hi Asha Rao / Asha — Raj here. {{unknown}}")
    assert placeholders.fill(text, placeholders.values("", "Raj")) == "Hi there / there — Raj here. {{unknown}}"


async def test_a_member_sets_their_own_time_zone_by_its_iana_name(use_cases):
    agent = await use_cases.member()
    for name in ("Mars/Olympus", "../etc/passwd", "", "x" * 65, "Asia/Kolkata "):
        outcome = await use_cases.run(agent, member_settings.SET_TIME_ZONE, {"time_zone": name})
        refused(outcome, 400, "invalid_time_zone")
    assert isinstance(await use_cases.run(agent, member_settings.SET_TIME_ZONE, {"time_zone": "Asia/Kolkata"}), Done)
    assert await use_cases.db.fetchval("SELECT time_zone FROM members WHERE id = $1", agent.member_id) == "Asia/Kolkata"
    # Read-only members change nothing, their own settings included.
    looker = await use_cases.member(permissions=["inbox:read"])
    refused(await use_cases.run(looker, member_settings.SET_TIME_ZONE, {"time_zone": "UTC"}), 403,
            "permission_denied")
