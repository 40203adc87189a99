"""Snoozes against a real PostgreSQL: a timed snooze ends by itself when its time comes, also when it came while
the service was down (the snooze clock reads snoozes from PostgreSQL on start); the customer writing ends any
snooze. The spec's scope table has `inbox` cover "snooze … conversations".

Real time, a snooze a second long: the clock's waits are database-bound, which trio's MockClock would jump past.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from inbox_actors.conversations.conversation import Snooze, Unsnooze, ask_conversation
from inbox_actors.conversations.snooze_clock import SnoozeClockDeps, snooze_clock_kind, start_snooze_clock
from tests import builders
from tests.integration.chat_helpers import customer_writes, running_chats_with_clock
from tests.waiting import eventually

PHONE = "919800000078"


def running_service(db):
    """The conversation and snooze clock actors as the service runs them."""
    return running_chats_with_clock(db, snooze_clock_kind(SnoozeClockDeps(db=db)),
                                    start_snooze_clock)


async def snoozed(db, workspace_id: int) -> tuple[bool, datetime | None]:
    row = await db.fetchrow("SELECT snoozed, snoozed_until FROM conversations WHERE workspace_id = $1 AND phone = $2",
                            workspace_id, PHONE)
    return row["snoozed"], row["snoozed_until"]


async def test_a_timed_snooze_ends_by_itself_also_after_a_restart(db):
    workspace_id = await builders.workspace(db)
    member = await builders.member(db, workspace_id)
    async with running_service(db) as system:
        await ask_conversation(system, workspace_id, PHONE, customer_writes(PHONE, "call me tomorrow"))
        until = datetime.now(timezone.utc) + timedelta(seconds=1)
        await ask_conversation(system, workspace_id, PHONE, Snooze(until=until, by_member=member, author="test"))
        assert await snoozed(db, workspace_id) == (True, until)
        await eventually(lambda: _ended(db, workspace_id), timeout=5)  # the clock woke the chat

        later = datetime.now(timezone.utc) + timedelta(seconds=1)
        await ask_conversation(system, workspace_id, PHONE, Snooze(until=later, by_member=member, author="test"))
    # Its time comes while no service runs; the next one's clock finds it.
    await eventually(lambda: datetime.now(timezone.utc) >= later, timeout=5)
    assert (await snoozed(db, workspace_id))[0] is True
    async with running_service(db):
        await eventually(lambda: _ended(db, workspace_id), timeout=5)


async def test_the_customer_writing_ends_a_snooze_and_a_member_may_end_one(db):
    workspace_id = await builders.workspace(db)
    member = await builders.member(db, workspace_id)
    async with running_service(db) as system:
        await ask_conversation(system, workspace_id, PHONE, customer_writes(PHONE, "hello"))
        await ask_conversation(system, workspace_id, PHONE, Snooze(until=None, by_member=member, author="test"))
        assert await snoozed(db, workspace_id) == (True, None)
        await ask_conversation(system, workspace_id, PHONE, customer_writes(PHONE, "still there?"))
        assert await snoozed(db, workspace_id) == (False, None)

        await ask_conversation(system, workspace_id, PHONE, Snooze(until=None, by_member=member, author="test"))
        await ask_conversation(system, workspace_id, PHONE, Unsnooze(by_member=member, author="test"))
        assert await snoozed(db, workspace_id) == (False, None)
        actions = [row["action"] for row in await db.fetch(
            "SELECT action FROM team_audit WHERE workspace_id = $1 ORDER BY id", workspace_id)]
        assert actions == ["chat.snoozed", "chat.snoozed", "chat.unsnoozed"]


async def _ended(db, workspace_id: int) -> bool:
    return (await snoozed(db, workspace_id)) == (False, None)
