"""A node whose own clock runs 25 hours ahead of PostgreSQL's (as one restarted under libfaketime did) against a real
PostgreSQL: it expires no session, invite, snooze, SLA deadline or retention record early, and its node-wide sweeps
decide nothing for a workspace by its own clock; the skew itself is measured, shown as a metric and warned of.
PostgreSQL's clock is the machine's true one; the node's is `AheadClock`, handed to everything that takes the
service's clock.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from inbox_actors.access import accounts, invites, sign_in
from inbox_actors.access.rate_bucket import NodeAddresses
from inbox_actors.access.sessions import find_session
from inbox_actors.actor_kinds import actor_jobs
from inbox_actors.conversations.conversation import Claim, SlaDue, Snooze, SnoozeDue, ask_conversation
from inbox_actors.conversations.sla_clock import SlaClockDeps, deadline_set, sla_clock_kind, start_sla_clock
from inbox_actors.conversations.snooze_clock import SnoozeClockDeps, snooze_clock_kind, start_snooze_clock
from inbox_actors.monitoring.clock_skew import clock_skew_job
from inbox_actors.monitoring.metrics import ServiceMetrics
from inbox_actors.runtime.clock import WallClock
from inbox_actors.team import sla
from persistence.queries import sla as sla_queries
from persistence.queries import snooze as snooze_queries
from tests import builders
from tests.integration.chat_helpers import customer_writes, running_chats_with_clock

SKEW = timedelta(hours=25)
PHONE = "919800000501"
PASSWORD = "a long enough password"


class AheadClock:
    """The node's clock, 25 hours ahead of PostgreSQL's."""

    def now(self) -> datetime:
        return datetime.now(timezone.utc) + SKEW


async def test_sessions_and_invites_live_their_time_on_a_node_ahead(db, bucket_actors):
    ahead = AheadClock()
    workspace_id = await builders.workspace(db)
    member_id = await accounts.add_member(db, workspace_id=workspace_id, name="Ann", role="agent",
                                          email="ann@example.com")
    # The link is made on the node ahead, an hour long: it lasts an hour of PostgreSQL's clock, not 26 of it.
    issued = await invites.invite_member(db, member_id=member_id, now=ahead.now(), created_by="operator", hours=1)
    assert abs(issued.expires_at - (datetime.now(timezone.utc) + timedelta(hours=1))) < timedelta(minutes=1)
    assert (await invites.invite_status(db, issued.token)).usable
    signed = await invites.accept_invite(db, token=issued.token, password=PASSWORD, now=ahead.now())
    assert isinstance(signed, sign_in.SignedIn)
    # A session made by a node with a true clock, judged on the node ahead: still live.
    assert (await find_session(db, signed.token)).member_id == member_id
    again = await sign_in.sign_in(db, NodeAddresses(bucket_actors), email="ann@example.com", password=PASSWORD,
                                  ip="192.0.2.1", now=ahead.now())
    assert isinstance(again, sign_in.SignedIn)
    assert again.expires_at - datetime.now(timezone.utc) < timedelta(hours=sign_in.WEB_SESSION_HOURS, minutes=1)
    assert await find_session(db, again.token) is not None


async def test_a_snooze_does_not_end_early_on_a_node_ahead(db):
    workspace_id = await builders.workspace(db)
    member = await builders.member(db, workspace_id)
    until = datetime.now(timezone.utc) + timedelta(hours=1)
    clock = snooze_clock_kind(SnoozeClockDeps(db=db))
    async with running_chats_with_clock(db, clock, start_snooze_clock, clock=AheadClock()) as system:
        await ask_conversation(system, workspace_id, PHONE, customer_writes(PHONE, "call me in an hour"))
        await ask_conversation(system, workspace_id, PHONE, Snooze(until=until, by_member=member, author="test"))
        assert await snooze_queries.due_snoozes(db, limit=10) == []       # what the snooze clock's rounds read
        # What a clock that judged by this node's time would tell the chat: the chat asks PostgreSQL's clock.
        await ask_conversation(system, workspace_id, PHONE, SnoozeDue(until))
        row = await db.fetchrow("SELECT snoozed, snoozed_until FROM conversations WHERE phone = $1", PHONE)
        assert (row["snoozed"], row["snoozed_until"]) == (True, until)


async def test_an_sla_deadline_is_not_breached_early_on_a_node_ahead(db):
    workspace_id = await builders.workspace(db)
    member = await builders.member(db, workspace_id)
    await sla.set_target(db, workspace_id, 3600)
    clock = sla_clock_kind(SlaClockDeps(db=db))
    async with running_chats_with_clock(db, clock, start_sla_clock, deadline_set=deadline_set,
                                        clock=AheadClock()) as system:
        await ask_conversation(system, workspace_id, PHONE, customer_writes(PHONE, "anyone there?"))
        await ask_conversation(system, workspace_id, PHONE, Claim(member_id=member, author="test"))
        deadline = await db.fetchval("SELECT sla_deadline_at FROM conversations WHERE phone = $1", PHONE)
        assert deadline is not None
        assert await sla_queries.due_breaches(db, limit=10) == []
        await ask_conversation(system, workspace_id, PHONE, SlaDue(deadline))
    assert await db.fetchval("SELECT count(*) FROM webhook_outbox WHERE event = 'sla_breached'") == 0
    assert await db.fetchval("SELECT count(*) FROM sla_breaches") == 0


async def test_the_node_wide_sweeps_delete_nothing_early_on_a_node_ahead(db):
    """Every retention sweep and the in-doubt sweep, as the service wires them (`actor_jobs`, which no longer takes a
    clock), on records 29 days old (5 hours for a pending send) by PostgreSQL's clock: 25 hours more on the node's
    would have put each past its limit."""
    workspace_id = await builders.workspace(db)
    member = await builders.member(db, workspace_id)
    issued = await builders.key(db, workspace_id, member)
    await db.execute("INSERT INTO key_activity (key_id, workspace_id, method, path, status, ip, at)"
                     " VALUES ($1, $2, 'GET', '/x', 200, '127.0.0.1', now() - $3::interval)", issued.id, workspace_id,
                     timedelta(days=29))
    await db.execute("INSERT INTO team_audit (workspace_id, at, member_id, via, action, subject, details)"
                     " VALUES ($1, now() - $2::interval, NULL, 'test', 'chat.snoozed', 'x', '{}')", workspace_id,
                     timedelta(days=29))
    await db.execute("INSERT INTO webhook_outbox (workspace_id, event, correlation_id, actor, data, created_at,"
                     " outcome, delivered_at) VALUES ($1, 'message_sent', 'evt_old', 'system', '{}',"
                     " now() - $2::interval, 'delivered', now())", workspace_id, timedelta(days=29))
    await db.execute("INSERT INTO messages (workspace_id, recipient, direction, sender_type, type, text, status,"
                     " source, sent_at, status_at) VALUES ($1, $2, 'outbound', 'system', 'text', 'hi', 'pending',"
                     " 'whatsapp', now() - $3::interval, now())", workspace_id, PHONE, timedelta(hours=5))
    for name, job in actor_jobs(db).items():
        assert not await job.run(None), f"{name} acted on a record not yet past its limit"
    counts = [await db.fetchval(f"SELECT count(*) FROM {table} WHERE {column} < now() - interval '28 days'")
              for table, column in (("key_activity", "at"), ("team_audit", "at"), ("webhook_outbox", "created_at"))]
    assert counts == [1, 1, 1]
    assert await db.fetchval("SELECT status FROM messages WHERE recipient = $1", PHONE) == "pending"


async def test_the_skew_is_measured_shown_and_warned_of(db, caplog):
    metrics = ServiceMetrics()
    job = clock_skew_job(db, AheadClock(), metrics)
    skew = await job.run(None)
    assert abs(skew - SKEW.total_seconds()) < 1.0
    assert abs(metrics.clock_skew._value.get() - skew) < 1e-9
    assert "inbox_node_clock_skew_seconds" in metrics.exposition().decode()
    assert any("runs 90000" in record.getMessage() and "ahead" in record.getMessage() for record in caplog.records)
    caplog.clear()
    assert abs(await clock_skew_job(db, WallClock(), None).run(None)) < 1.0     # a true clock: no warning
    assert not [record for record in caplog.records if record.levelname == "WARNING"]
