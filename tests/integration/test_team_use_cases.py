"""The team's use cases at their own level: the runner's permission and argument checks, then the roster's and
the SLA policy's rules as each declaration in `use_cases/team.py` answers them, on a real PostgreSQL with no HTTP.
The doors' tests (e2e) check only how each maps the outcome. The `use_cases` fixture is the integration conftest's."""

from __future__ import annotations

from inbox_actors.domain import scopes
from inbox_actors.use_cases import team
from inbox_actors.use_cases.outcomes import Done, Reason, Refused
from tests import builders

NO_TEAM = ["inbox"]  # an agent's kind of permissions, without the team's


def refused(outcome, status: int, code: str) -> bool:
    return isinstance(outcome, Refused) and (outcome.status, outcome.code) == (status, code)


def permission_refused(outcome, use_case) -> bool:
    return (isinstance(outcome, Refused) and (outcome.reason, outcome.status) == (Reason.PERMISSION, 403)
            and f"{use_case.name} needs the {use_case.needed()} permission" in outcome.message)


async def test_adding_a_member_needs_team_management_and_takes_the_roster_s_fields(use_cases):
    admin = await use_cases.member(role="admin")
    reader = await use_cases.member(permissions=["team_management:read"])
    outsider = await use_cases.member(permissions=NO_TEAM)
    for caller in (reader, outsider):
        outcome = await use_cases.run(caller, team.ADD_MEMBER, {"name": "Ravi", "role": "agent"})
        assert permission_refused(outcome, team.ADD_MEMBER)
    assert team.MEMBERS.allows(reader) and not team.ADD_MEMBER.allows(reader)  # what the roster page asks

    for fields in ({"name": "", "role": "agent"}, {"name": "X", "role": "owner"},
                   {"name": "X", "role": "agent", "permissions": ["root"]}, {"name": "X", "role": "agent", "x": 1}):
        outcome = await use_cases.run(admin, team.ADD_MEMBER, fields)
        assert refused(outcome, 400, "invalid_arguments") and outcome.reason is Reason.INVALID, fields

    added = await use_cases.run(admin, team.ADD_MEMBER, {"name": " Ravi ", "role": "agent",
                                                         "email": "ravi@example.com"})
    assert isinstance(added, Done) and added.data.name == "Ravi" and added.data.status == "active"
    assert added.data.permissions == list(scopes.AGENT_PERMISSIONS)
    again = await use_cases.run(admin, team.ADD_MEMBER, {"name": "Other", "role": "agent",
                                                         "email": "RAVI@example.com"})
    assert refused(again, 409, "email_taken")


async def test_a_lead_grants_only_what_it_holds_and_never_an_admin(use_cases):
    lead = await use_cases.member(permissions=["team_management", "inbox"])
    boss = await use_cases.run(lead, team.ADD_MEMBER, {"name": "Boss", "role": "admin"})
    assert refused(boss, 403, "admin_required")
    agent = await use_cases.run(lead, team.ADD_MEMBER, {"name": "Asha", "role": "agent", "permissions": ["inbox"]})
    assert isinstance(agent, Done)
    wider = await use_cases.run(lead, team.CHANGE_MEMBER, {"member_id": agent.data.user_id,
                                                           "permissions": ["inbox", "campaigns"]})
    assert refused(wider, 403, "permission_not_held")


async def test_changing_a_member_takes_the_member_and_the_roster_s_change(use_cases):
    admin = await use_cases.member(role="admin")
    agent = await use_cases.member(permissions=["inbox"])
    outsider = await use_cases.member(permissions=NO_TEAM)
    outcome = await use_cases.run(outsider, team.CHANGE_MEMBER, {"member_id": agent.member_id, "name": "X"})
    assert permission_refused(outcome, team.CHANGE_MEMBER)

    for fields in ({"member_id": agent.member_id, "name": ""}, {"name": "X"},
                   {"member_id": agent.member_id, "permissions": []}, {"member_id": -1, "name": "X"}):
        outcome = await use_cases.run(admin, team.CHANGE_MEMBER, fields)
        assert refused(outcome, 400, "invalid_arguments"), fields
    # A form sends text: "true" is true.
    changed = await use_cases.run(admin, team.CHANGE_MEMBER, {
        "member_id": str(agent.member_id), "name": " Ravi K ", "permissions": ["inbox:read"],
        "assigned_only": "true"}, strict=False)
    assert isinstance(changed, Done)
    assert (changed.data.name, changed.data.permissions, changed.data.assigned_only) == ("Ravi K", ["inbox:read"],
                                                                                        True)
    assert refused(await use_cases.run(admin, team.CHANGE_MEMBER, {"member_id": admin.member_id, "role": "agent"}),
                   409, "last_admin")
    assert refused(await use_cases.run(admin, team.CHANGE_MEMBER, {"member_id": 0, "name": "X"}), 404, "not_found")


async def test_suspending_and_reactivating_a_member(use_cases):
    admin = await use_cases.member(role="admin")
    agent = await use_cases.member(permissions=["inbox"])
    for use_case in (team.SUSPEND_MEMBER, team.REACTIVATE_MEMBER):
        outcome = await use_cases.run(agent, use_case, {"member_id": admin.member_id})
        assert permission_refused(outcome, use_case)
        assert refused(await use_cases.run(admin, use_case, {"member_id": "x"}), 400, "invalid_arguments")
        assert refused(await use_cases.run(admin, use_case, {"member_id": 999_999_999}), 404, "not_found")

    suspended = await use_cases.run(admin, team.SUSPEND_MEMBER, {"member_id": agent.member_id})
    assert isinstance(suspended, Done) and suspended.data.status == "suspended"
    assert refused(await use_cases.run(admin, team.SUSPEND_MEMBER, {"member_id": admin.member_id}),
                   409, "last_admin")
    back = await use_cases.run(admin, team.REACTIVATE_MEMBER, {"member_id": agent.member_id})
    assert isinstance(back, Done) and back.data.status == "active"


async def test_removing_a_member_needs_its_own_permission_and_is_final(use_cases):
    admin = await use_cases.member(role="admin")
    lead = await use_cases.member(permissions=["team_management"])
    agent = await use_cases.member(permissions=["inbox"])
    outcome = await use_cases.run(lead, team.REMOVE_MEMBER, {"member_id": agent.member_id})
    assert permission_refused(outcome, team.REMOVE_MEMBER) and "team_remove_member" in outcome.message
    assert refused(await use_cases.run(admin, team.REMOVE_MEMBER, {"member_id": agent.member_id, "why": "x"}),
                   400, "invalid_arguments")

    removed = await use_cases.run(admin, team.REMOVE_MEMBER, {"member_id": agent.member_id})
    assert isinstance(removed, Done) and removed.data.status == "removed" and removed.data.released_chats == 0
    assert refused(await use_cases.run(admin, team.REACTIVATE_MEMBER, {"member_id": agent.member_id}),
                   409, "member_removed")


async def test_inviting_a_member_makes_a_link_for_one_with_an_email(use_cases):
    admin = await use_cases.member(role="admin")
    outsider = await use_cases.member(permissions=NO_TEAM)
    added = await use_cases.run(admin, team.ADD_MEMBER, {"name": "Ravi", "role": "agent",
                                                         "email": "ravi@example.com"})
    assert isinstance(added, Done)
    member_id = added.data.user_id
    assert permission_refused(await use_cases.run(outsider, team.INVITE_MEMBER, {"member_id": member_id}),
                              team.INVITE_MEMBER)
    assert refused(await use_cases.run(admin, team.INVITE_MEMBER, {}), 400, "invalid_arguments")

    made = await use_cases.run(admin, team.INVITE_MEMBER, {"member_id": member_id})
    assert isinstance(made, Done) and made.data.member_id == member_id
    assert made.data.path.startswith("/app/invite/invite_")
    # A member without an email has nothing to sign in with; one of another workspace is no member of this one.
    assert refused(await use_cases.run(admin, team.INVITE_MEMBER, {"member_id": outsider.member_id}),
                   409, "invite_refused")
    stranger = await use_cases.member(workspace_id=await builders.workspace(use_cases.db))
    assert refused(await use_cases.run(admin, team.INVITE_MEMBER, {"member_id": stranger.member_id}),
                   404, "not_found")


async def test_saving_the_sla_policy(use_cases):
    admin = await use_cases.member(role="admin")
    reader = await use_cases.member(permissions=["team_management:read"])
    outcome = await use_cases.run(reader, team.SAVE_SLA, {"sla_seconds": 60})
    assert permission_refused(outcome, team.SAVE_SLA)
    assert team.SLA_POLICY.allows(reader) and not team.SAVE_SLA.allows(reader)

    for fields in ({"sla_seconds": 0}, {}, {"sla_seconds": 900, "escalate": True}):
        assert refused(await use_cases.run(admin, team.SAVE_SLA, fields), 400, "invalid_arguments"), fields
    overlapping = {"sla_seconds": 900, "business_hours": {"time_zone": "UTC", "weekly": {
        "mon": [{"open": "09:00", "close": "17:00"}, {"open": "16:00", "close": "18:00"}]}}}
    assert refused(await use_cases.run(admin, team.SAVE_SLA, overlapping), 400, "invalid_business_hours")

    saved = await use_cases.run(admin, team.SAVE_SLA, {"sla_seconds": 900, "business_hours": {
        "time_zone": "Asia/Kolkata", "weekly": {"mon": [{"open": "09:00", "close": "17:00"}]},
        "holidays": ["2026-12-25"]}})
    assert isinstance(saved, Done) and saved.data.deadlines == "business_hours"
    assert saved.data.updated_by.user_id == admin.member_id
    read = await use_cases.run(reader, team.SLA_POLICY, {})
    assert isinstance(read, Done) and read.data == saved.data


async def test_the_roster_and_one_member_are_read_with_team_management_read(use_cases):
    admin = await use_cases.member(role="admin")
    reader = await use_cases.member(permissions=["team_management:read"])
    outsider = await use_cases.member(permissions=NO_TEAM)
    for use_case, arguments in ((team.MEMBERS, {}), (team.MEMBER, {"member_id": admin.member_id}),
                                (team.SLA_POLICY, {})):
        assert permission_refused(await use_cases.run(outsider, use_case, arguments), use_case)
        assert "team_management:read" in use_case.needed()

    first = await use_cases.run(reader, team.MEMBERS, {"query": {"limit": "1"}})
    assert isinstance(first, Done) and [m.user_id for m in first.data.data] == [admin.member_id]
    rest = await use_cases.run(reader, team.MEMBERS, {"query": {"limit": "1", "cursor": first.data.next_cursor}})
    assert isinstance(rest, Done) and rest.data.data[0].user_id == reader.member_id
    assert refused(await use_cases.run(reader, team.MEMBERS, {"query": {"limit": "0"}}), 400, "invalid_limit")
    assert refused(await use_cases.run(reader, team.MEMBERS, {"query": {"status": "gone"}}), 400, "invalid_status")
    assert refused(await use_cases.run(reader, team.MEMBERS, {"query": {"limit": 1}}), 400, "invalid_arguments")

    one = await use_cases.run(reader, team.MEMBER, {"member_id": admin.member_id})
    assert isinstance(one, Done) and one.data.role == "admin"
    assert refused(await use_cases.run(reader, team.MEMBER, {"member_id": 999_999_999}), 404, "not_found")
    assert refused(await use_cases.run(reader, team.MEMBER, {"member_id": 2**63}), 400, "invalid_arguments")


async def test_the_audit_log_needs_audit_view_and_shows_the_team_s_changes(use_cases):
    admin = await use_cases.member(role="admin")
    lead = await use_cases.member(permissions=["team_management"])
    assert permission_refused(await use_cases.run(lead, team.AUDIT_LOG, {}), team.AUDIT_LOG)
    await use_cases.run(admin, team.SAVE_SLA, {"sla_seconds": 600})
    assert refused(await use_cases.run(admin, team.AUDIT_LOG, {"query": {"action": "nothing"}}), 400,
                   "invalid_action")
    assert refused(await use_cases.run(admin, team.AUDIT_LOG, {"query": {"since": "2020-01-01T00:00:00Z",
                                                                         "to": "2019-01-01T00:00:00Z"}}),
                   400, "since_after_to")
    log = await use_cases.run(admin, team.AUDIT_LOG, {"query": {"member_id": str(admin.member_id)}})
    assert isinstance(log, Done) and [(e.action, e.subject) for e in log.data.data] == [("sla.changed", "sla")]


async def test_performance_and_the_hand_off_queue_are_the_team_s_data(use_cases):
    admin = await use_cases.member(role="admin")
    analyst = await use_cases.member(permissions=["analytics:read"])
    contacts_only = await use_cases.member(permissions=["contacts"])
    assert permission_refused(await use_cases.run(contacts_only, team.PERFORMANCE, {}), team.PERFORMANCE)
    assert permission_refused(await use_cases.run(analyst, team.HANDOFF_QUEUE, {}), team.HANDOFF_QUEUE)

    performance = await use_cases.run(analyst, team.PERFORMANCE, {})
    assert isinstance(performance, Done) and performance.data.unassigned_sla_breaches == 0
    assert refused(await use_cases.run(analyst, team.PERFORMANCE, {"query": {"since": "yesterday"}}), 400,
                   "invalid_since")
    queue = await use_cases.run(admin, team.HANDOFF_QUEUE, {"query": {"limit": "5"}})
    assert isinstance(queue, Done) and queue.data.data == []
    assert refused(await use_cases.run(admin, team.HANDOFF_QUEUE, {"query": {"cursor": "nonsense"}}), 400,
                   "invalid_cursor")
