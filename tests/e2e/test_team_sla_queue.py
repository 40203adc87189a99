"""The team's SLA policy and hand-off queue over real sockets: reading and saving the policy (business hours
included, named 400s that change nothing, who may call), a hand-off's deadline computed in business hours, and the
queue's order, paging and assigned-only rule."""

from __future__ import annotations

from datetime import datetime, time
from zoneinfo import ZoneInfo

from inbox_actors.domain.business_hours import parse_business_hours, sla_deadline
from tests import builders
from tests.e2e.chat_helpers import chat, customer_writes, scale_workspace
from tests.e2e.conftest import bearer
from tests.e2e.test_key_management import session_of
from tests.waiting import eventually

SLA = "/api/team/sla"
QUEUE = "/api/team/handoff-queue"
# Open only on Sunday 03:00-03:30 in Kolkata: whenever a test runs, a wait's deadline is in that half hour.
SUNDAY_NIGHTS = {"time_zone": "Asia/Kolkata", "weekly": {"sun": [{"open": "03:00", "close": "03:30"}]},
                 "holidays": []}


def assert_stable(response, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    assert response.json()["error"] == code and response.json()["message"], response.text


def instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


async def test_the_policy_reads_empty_then_saves_whole_and_says_who_set_it(service):
    workspace_id, _, admin, key = await scale_workspace(service.db)
    empty = await service.client.get(SLA, headers=bearer(key))
    assert empty.status_code == 200, empty.text
    assert empty.json() == {"sla_seconds": None, "business_hours": None, "deadlines": "none", "updated_at": None,
                            "updated_by": None}

    hours = {"time_zone": "Europe/Berlin", "holidays": ["2026-12-25"],
             "weekly": {"fri": [{"open": "13:00", "close": "17:00"}, {"open": "09:00", "close": "12:00"}],
                        "mon": [{"open": "09:00", "close": "24:00"}]}}
    saved = await service.client.put(SLA, headers=bearer(key), json={"sla_seconds": 900, "business_hours": hours})
    assert saved.status_code == 200, saved.text
    policy = saved.json()
    assert policy["sla_seconds"] == 900 and policy["deadlines"] == "business_hours"
    assert policy["business_hours"] == {
        "time_zone": "Europe/Berlin", "holidays": ["2026-12-25"],
        "weekly": {"mon": [{"open": "09:00", "close": "24:00"}],
                   "fri": [{"open": "09:00", "close": "12:00"}, {"open": "13:00", "close": "17:00"}]}}
    assert policy["updated_by"]["user_id"] == admin and policy["updated_at"]
    assert (await service.client.get(SLA, headers=bearer(key))).json() == policy

    around = await service.client.put(SLA, headers=bearer(key), json={"sla_seconds": 600})
    assert (around.json()["business_hours"], around.json()["deadlines"]) == (None, "around_the_clock")
    none = await service.client.put(SLA, headers=bearer(key), json={"sla_seconds": None, "business_hours": hours})
    assert none.json()["deadlines"] == "none", "business hours without a target: nothing breaches"


async def test_a_bad_policy_is_a_named_400_and_changes_nothing(service):
    _, _, _, key = await scale_workspace(service.db)
    await service.client.put(SLA, headers=bearer(key), json={"sla_seconds": 900})
    before = (await service.client.get(SLA, headers=bearer(key))).json()
    day = {"open": "09:00", "close": "17:00"}
    for body, code in (
        ({"sla_seconds": 900, "business_hours": {"time_zone": "Mars/Olympus", "weekly": {"mon": [day]}}},
         "invalid_business_hours"),
        ({"sla_seconds": 900, "business_hours": {"time_zone": "UTC",
                                                 "weekly": {"mon": [{"open": "17:00", "close": "09:00"}]}}},
         "invalid_business_hours"),
        ({"sla_seconds": 900, "business_hours": {"time_zone": "UTC", "weekly": {
            "mon": [day, {"open": "16:00", "close": "18:00"}]}}}, "invalid_business_hours"),
        ({"sla_seconds": 900, "business_hours": {"time_zone": "UTC", "weekly": {}}}, "invalid_business_hours"),
        ({"sla_seconds": 0}, "invalid_body"),
        ({"sla_seconds": 900, "business_hours": {"time_zone": "UTC", "weekly": {"monday": [day]}}}, "invalid_body"),
        ({"sla_seconds": 900, "escalate": True}, "invalid_body"),
        ({}, "invalid_body"),
    ):
        assert_stable(await service.client.put(SLA, headers=bearer(key), json=body), 400, code)
    assert (await service.client.get(SLA, headers=bearer(key))).json() == before


async def test_who_may_read_and_change_the_policy(service):
    workspace_id, _, admin, key = await scale_workspace(service.db)
    reader = await builders.key(service.db, workspace_id, admin, ("team_management:read",))
    inbox = await builders.key(service.db, workspace_id, admin, ("inbox",))
    assert (await service.client.get(SLA, headers=bearer(reader.key))).status_code == 200
    assert_stable(await service.client.put(SLA, headers=bearer(reader.key), json={"sla_seconds": 60}), 403,
                  "read_only_key")
    assert_stable(await service.client.get(SLA, headers=bearer(inbox.key)), 403, "scope_denied")
    growth = await builders.workspace(service.db, "growth")
    growth_key = await builders.key(service.db, growth, await builders.member(service.db, growth))
    assert_stable(await service.client.get(SLA, headers=bearer(growth_key.key)), 403, "api_access_not_enabled")
    # The web app's dashboard session: a member with the team_management permission may change it.
    session = await session_of(service.db, admin)
    assert (await service.client.put(SLA, headers=session, json={"sla_seconds": 120})).status_code == 200


async def test_a_hand_off_is_given_its_deadline_in_business_hours_and_keeps_it(service):
    workspace_id, number, _, key = await scale_workspace(service.db)
    saved = await service.client.put(SLA, headers=bearer(key), json={"sla_seconds": 600,
                                                                     "business_hours": SUNDAY_NIGHTS})
    assert saved.status_code == 200, saved.text
    phone = "919844444401"
    await customer_writes(service, number, phone, "is anyone there?")  # the bot has no answer: it hands off

    async def handed_off():
        detail = await chat(service, key, phone)
        return detail if detail["sla_deadline_at"] else None

    detail = await eventually(handed_off)
    since = instant(detail["waiting_for_person_since"])
    expected = sla_deadline(since, 600, parse_business_hours(SUNDAY_NIGHTS))
    assert instant(detail["sla_deadline_at"]) == expected
    local = expected.astimezone(ZoneInfo("Asia/Kolkata"))
    assert local.weekday() == 6 and time(3, 0) < local.time() <= time(3, 30), "inside Sunday's opening"
    assert detail["sla_breached"] is False

    # A new policy applies to waits that start later: this chat keeps the deadline it was given.
    await service.client.put(SLA, headers=bearer(key), json={"sla_seconds": 60})
    assert (await chat(service, key, phone))["sla_deadline_at"] == detail["sla_deadline_at"]


async def test_the_queue_lists_handed_off_chats_longest_waiting_first_and_pages(service):
    workspace_id, number, admin, key = await scale_workspace(service.db)
    await service.client.put(SLA, headers=bearer(key), json={"sla_seconds": 3600})
    phones = ["919844444411", "919844444412", "919844444413"]
    for phone in phones:
        await customer_writes(service, number, phone, "help please")

    async def queued(expected: int):
        response = await service.client.get(QUEUE, headers=bearer(key))
        assert response.status_code == 200, response.text
        queue = response.json()
        return queue if queue["total"] == len(queue["data"]) == expected else None

    queue = await eventually(lambda: queued(3))
    assert [row["phone"] for row in queue["data"]] == phones, "longest waiting first"
    first = queue["data"][0]
    assert first["state"] == "HANDOFF_PENDING" and first["handover_reason"] == "bot_has_no_answer"
    assert 3500 <= first["sla_seconds_left"] <= 3600 and first["queued_seconds"] >= 0
    assert queue["longest_wait_seconds"] >= 0 and queue["next_cursor"] is None

    claimed = await service.client.post(f"/api/inbox/conversations/{phones[0]}/claim", headers=bearer(key))
    assert claimed.status_code == 200, claimed.text
    page = (await service.client.get(QUEUE, headers=bearer(key), params={"limit": 1})).json()
    assert [row["phone"] for row in page["data"]] == [phones[1]] and page["total"] == 2 and page["next_cursor"]
    rest = (await service.client.get(QUEUE, headers=bearer(key),
                                     params={"limit": 1, "cursor": page["next_cursor"]})).json()
    assert [row["phone"] for row in rest["data"]] == [phones[2]] and rest["next_cursor"] is None

    assigned_only = await builders.key(service.db, workspace_id, admin, ("inbox:read", "inbox_assigned_only"))
    mine = (await service.client.get(QUEUE, headers=bearer(assigned_only.key))).json()
    assert (mine["data"], mine["total"]) == ([], 0), "queued chats are nobody's yet"
    assert_stable(await service.client.get(QUEUE, headers=bearer(key), params={"cursor": "not-ours"}), 400,
                  "invalid_cursor")
    analytics = await builders.key(service.db, workspace_id, admin, ("analytics",))
    assert_stable(await service.client.get(QUEUE, headers=bearer(analytics.key)), 403, "scope_denied")
