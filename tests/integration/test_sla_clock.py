"""The SLA clock against a real PostgreSQL: a wait for a person past its deadline is announced (sla_breached)
exactly once, also when the deadline passed while the service was down, and a new wait is a new breach.

Real time with a one-second SLA (the shortest there is): the clock's waits are database-bound, which trio's
MockClock would jump past while a query is in flight. "Nothing more" is shown with a barrier, not a sleep: the
chat is asked to announce the same deadline again (what a second clock round would do) and emits nothing.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest
import trio

from inbox_actors.conversations.conversation import Claim, Resolve, SlaDue, ask_conversation
from inbox_actors.conversations.sla_clock import SlaClockDeps, deadline_set, sla_clock_kind, start_sla_clock
from inbox_actors.team import sla
from tests import builders
from tests.integration.chat_helpers import customer_writes, running_chats_with_clock
from tests.waiting import eventually

PHONE = "919800000077"


def running_service(db):
    """The conversation and SLA clock actors as the service runs them."""
    return running_chats_with_clock(db, sla_clock_kind(SlaClockDeps(db=db)), start_sla_clock,
                                    deadline_set=deadline_set)


async def breaches(db, workspace_id: int) -> list[dict]:
    rows = await db.fetch("SELECT data FROM webhook_outbox WHERE workspace_id = $1 AND event = 'sla_breached'"
                          " ORDER BY id", workspace_id)
    return [row["data"] for row in rows]


async def wait_for_breaches(db, workspace_id: int, count: int) -> list:
    with trio.fail_after(5):
        while len(found := await breaches(db, workspace_id)) < count:
            await trio.sleep(0.05)
    return found


@pytest.fixture
async def one_second_sla(db) -> tuple[int, int]:
    """(workspace id, member id) of a workspace whose customers may wait one second for a person."""
    workspace_id = await builders.workspace(db)
    member = await builders.member(db, workspace_id)
    await sla.set_target(db, workspace_id, 1)
    return workspace_id, member


async def announce_again(db, system, workspace_id: int):
    """Ask the chat to announce its current deadline once more (a barrier: it answers after deciding)."""
    deadline = await db.fetchval("SELECT sla_deadline_at FROM conversations WHERE workspace_id = $1 AND phone = $2",
                                 workspace_id, PHONE)
    await ask_conversation(system, workspace_id, PHONE, SlaDue(deadline))
    return deadline


async def a_waiting_chat(system, workspace_id: int, member: int) -> None:
    """A customer waits for a person: they wrote, and a member claimed the chat without answering yet."""
    await ask_conversation(system, workspace_id, PHONE, customer_writes(PHONE, "anyone there?"))
    await ask_conversation(system, workspace_id, PHONE, Claim(member_id=member, author="test"))


async def test_a_breach_is_announced_once_when_the_deadline_passes(db, one_second_sla):
    workspace_id, member = one_second_sla
    async with running_service(db) as system:
        await a_waiting_chat(system, workspace_id, member)
        assert await breaches(db, workspace_id) == [], "not before the deadline"
        [breach] = await wait_for_breaches(db, workspace_id, 1)
        deadline = await announce_again(db, system, workspace_id)
        assert len(await breaches(db, workspace_id)) == 1, "exactly one per breach"
    data = json.loads(breach)
    assert data["phone"] == PHONE and data["sla_seconds"] == 1 and data["assigned_to"]["user_id"] == member
    assert data["deadline"] and data["waiting_for_person_since"] and data["state"] == "HUMAN_ACTIVE"

    async with running_service(db) as system:  # a restarted service announces nothing again
        assert await announce_again(db, system, workspace_id) == deadline
    assert len(await breaches(db, workspace_id)) == 1


async def test_a_deadline_that_passed_while_the_service_was_down_is_announced_on_start(db, one_second_sla):
    workspace_id, member = one_second_sla
    async with running_service(db) as system:
        await a_waiting_chat(system, workspace_id, member)
    assert await breaches(db, workspace_id) == []
    deadline = await db.fetchval("SELECT sla_deadline_at FROM conversations WHERE workspace_id = $1 AND phone = $2",
                                 workspace_id, PHONE)
    # The deadline passes while no service runs (on the service's clock: the wall clock).
    await eventually(lambda: datetime.now(timezone.utc) >= deadline, timeout=5)
    async with running_service(db):
        await wait_for_breaches(db, workspace_id, 1)


async def test_a_new_wait_is_a_new_breach_and_an_ended_wait_none(db, one_second_sla):
    workspace_id, member = one_second_sla
    async with running_service(db) as system:
        await a_waiting_chat(system, workspace_id, member)
        await wait_for_breaches(db, workspace_id, 1)
        # Resolved before its deadline: that wait is over, nothing to announce.
        await ask_conversation(system, workspace_id, PHONE, Resolve(by_member=member, author="test", reason=None))
        await a_waiting_chat(system, workspace_id, member)
        second_deadline = await db.fetchval("SELECT sla_deadline_at FROM conversations WHERE phone = $1", PHONE)
        await ask_conversation(system, workspace_id, PHONE, Resolve(by_member=member, author="test", reason=None))
        await ask_conversation(system, workspace_id, PHONE, SlaDue(second_deadline))
        assert len(await breaches(db, workspace_id)) == 1
        await a_waiting_chat(system, workspace_id, member)
        await wait_for_breaches(db, workspace_id, 2)
