"""The conversation actor against a real PostgreSQL, with a platform of our own making (no statuses come back
unless the test sends them): fencing, crash isolation, the status rules that clear needs_reply."""

from __future__ import annotations

import itertools
import json
from datetime import datetime, timezone

import pytest
import trio

from inbox_actors.contacts.events import contact_event_data
from inbox_actors.conversations import conversation, send_pacer
from inbox_actors.conversations.chat_state import ChatState, NewChat, OutboxEvent
from inbox_actors.conversations.conversation import (
    ConversationDeps,
    CustomerWrote,
    Send,
    StatusReported,
    conversation_kind,
)
from inbox_actors.conversations.send_pacer import send_pacer_kind
from inbox_actors.platform.payloads import InboundMessage, SendAccepted, SendRequest, StatusUpdate
from inbox_actors.runtime import Actor, ActorCrashed, ActorKind, ActorSystem
from inbox_actors.runtime.clock import WallClock
from persistence.queries.contacts import first_contact_row
from persistence.queries.conversations import NEW_CONVERSATION, NEW_MESSAGE_ID, VersionConflict
from tests import builders
from tests.faults import records_a_send_outcome
from tests.waiting import eventually

_ids = itertools.count(1)


class RecordingPlatform:
    """Accepts every send; raises for the numbers in `broken` (a bug in the platform path)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, SendRequest]] = []
        self.broken: set[str] = set()

    async def send(self, phone_number_id: str, request: SendRequest) -> SendAccepted:
        if request.to in self.broken:
            raise RuntimeError("platform client bug")
        self.sent.append((phone_number_id, request))
        return SendAccepted(message_id=f"wamid.test-{next(_ids)}")


@pytest.fixture
async def chats(db, nursery):
    platform = RecordingPlatform()
    deps = ConversationDeps(db=db, clock=WallClock(), platform=platform, responder=None)
    system = ActorSystem([conversation_kind(deps), send_pacer_kind()])
    await nursery.start(system.run)
    workspace_id = await builders.workspace(db)
    yield system, workspace_id, platform
    await system.shutdown(2)


def inbound(phone: str, text: str = "hello") -> CustomerWrote:
    return CustomerWrote(InboundMessage(message_id=f"wamid.in-{next(_ids)}", from_phone=phone,
                                        at=datetime.now(timezone.utc), type="text", text=text))


def reply(text: str = "on it") -> Send:
    return Send(request=SendRequest(to="", text=text), sender_type="system", author="test")


async def test_a_read_status_before_delivered_still_counts_as_reaching_the_phone(db, chats):
    system, workspace_id, _ = chats
    phone = "919800000011"
    await conversation.ask_conversation(system, workspace_id, phone, inbound(phone))
    outcome = await conversation.ask_conversation(system, workspace_id, phone, reply())
    waiting = await db.fetchval("SELECT waiting_since FROM conversations WHERE phone = $1", phone)
    assert waiting is not None  # sent is not delivered: still waiting
    await conversation.ask_conversation(system, workspace_id, phone, StatusReported(StatusUpdate(
        message_id=outcome.platform_message_id, recipient_phone=phone, status="read",
        at=datetime.now(timezone.utc))))
    assert await db.fetchval("SELECT waiting_since FROM conversations WHERE phone = $1", phone) is None


async def test_a_failed_send_is_not_a_reply(db, chats):
    system, workspace_id, _ = chats
    phone = "919800000012"
    await conversation.ask_conversation(system, workspace_id, phone, inbound(phone))
    outcome = await conversation.ask_conversation(system, workspace_id, phone, reply())
    await conversation.ask_conversation(system, workspace_id, phone, StatusReported(StatusUpdate(
        message_id=outcome.platform_message_id, recipient_phone=phone, status="failed",
        at=datetime.now(timezone.utc), error_code=131026, error_title="Message undeliverable")))
    row = await db.fetchrow("SELECT c.waiting_since, m.status, m.error_code FROM conversations c"
                            " JOIN messages m ON m.conversation_id = c.id AND m.direction = 'outbound'"
                            " WHERE c.phone = $1", phone)
    assert row["waiting_since"] is not None and row["status"] == "failed" and row["error_code"] == 131026


async def test_a_crash_in_one_chat_leaves_the_others_alone_and_the_chat_recovers(db, chats):
    system, workspace_id, platform = chats
    sick, healthy = "919800000013", "919800000014"
    for phone in (sick, healthy):
        await conversation.ask_conversation(system, workspace_id, phone, inbound(phone))
    platform.broken.add(sick)
    with pytest.raises(ActorCrashed):
        await conversation.ask_conversation(system, workspace_id, sick, reply())
    assert (await conversation.ask_conversation(system, workspace_id, healthy, reply())).accepted
    platform.broken.clear()
    assert (await conversation.ask_conversation(system, workspace_id, sick, reply())).accepted
    assert system.statistics(conversation.KIND, f"{workspace_id}:{sick}").restarts == 1


async def test_another_writer_is_fenced_off_by_the_version_and_the_actor_reloads(db, chats):
    system, workspace_id, _ = chats
    phone = "919800000015"
    await conversation.ask_conversation(system, workspace_id, phone, inbound(phone))
    # Another process that believed it owned the chat wrote it: the version moved under this actor.
    await db.execute("UPDATE conversations SET version = version + 1, labels = '{vip}' WHERE phone = $1", phone)
    with pytest.raises(ActorCrashed):
        await conversation.ask_conversation(system, workspace_id, phone, inbound(phone, "second"))
    await conversation.ask_conversation(system, workspace_id, phone, inbound(phone, "third"))
    row = await db.fetchrow("SELECT labels, count_from_customer FROM conversations WHERE phone = $1", phone)
    assert row["labels"] == ["vip"]  # the other writer's change survived
    assert row["count_from_customer"] == 2  # the fenced write left nothing behind
    assert await db.fetchval("SELECT count(*) FROM messages WHERE text = 'second'") == 0


async def test_a_reply_delivered_after_the_customer_wrote_again_leaves_them_waiting(db, chats):
    system, workspace_id, _ = chats
    phone = "919800000016"
    await conversation.ask_conversation(system, workspace_id, phone, inbound(phone, "first question"))
    outcome = await conversation.ask_conversation(system, workspace_id, phone, reply())
    await conversation.ask_conversation(system, workspace_id, phone, inbound(phone, "and another thing"))
    await conversation.ask_conversation(system, workspace_id, phone, StatusReported(StatusUpdate(
        message_id=outcome.platform_message_id, recipient_phone=phone, status="delivered",
        at=datetime.now(timezone.utc))))
    assert await db.fetchval("SELECT waiting_since FROM conversations WHERE phone = $1", phone) is not None


async def test_a_late_redelivery_of_an_older_message_is_not_the_last_word(db, chats):
    system, workspace_id, _ = chats
    phone = "919800000017"
    await conversation.ask_conversation(system, workspace_id, phone, inbound(phone, "newest"))
    outcome = await conversation.ask_conversation(system, workspace_id, phone, reply())
    await conversation.ask_conversation(system, workspace_id, phone, StatusReported(StatusUpdate(
        message_id=outcome.platform_message_id, recipient_phone=phone, status="delivered",
        at=datetime.now(timezone.utc))))
    older = CustomerWrote(InboundMessage(message_id="wamid.older", from_phone=phone, type="text", text="older",
                                         at=datetime(2020, 1, 1, tzinfo=timezone.utc)))
    await conversation.ask_conversation(system, workspace_id, phone, older)
    row = await db.fetchrow("SELECT c.waiting_since, m.text FROM conversations c JOIN messages m"
                            " ON m.id = c.last_message_id WHERE c.phone = $1", phone)
    assert row["waiting_since"] is None and row["text"] == "on it"
    assert await db.fetchval("SELECT count_from_customer FROM conversations WHERE phone = $1", phone) == 2


async def test_an_accepted_send_is_recorded_through_a_brief_database_outage(db, chats):
    system, workspace_id, platform = chats
    phone = "919800000018"
    await conversation.ask_conversation(system, workspace_id, phone, inbound(phone))
    outage = db.fail_next(records_a_send_outcome)  # the connection is lost as the outcome is written, once
    outcome = await conversation.ask_conversation(system, workspace_id, phone, reply())
    assert outage.raised == 1
    assert outcome.accepted and len(platform.sent) == 1  # sent once, recorded on the second try
    assert await db.fetchval("SELECT count(*) FROM messages WHERE platform_message_id = $1",
                             outcome.platform_message_id) == 1


async def test_a_first_template_to_a_number_is_recorded_through_a_brief_database_outage(db, chats):
    """The outage hits after the chat and its contact were written in the same transaction: the retry creates
    them again (nothing of the rolled-back attempt is taken as the chat), once."""
    system, workspace_id, platform = chats
    phone = "919800000019"
    outage = db.fail_next(records_a_send_outcome)  # the connection is lost as the outcome is written, once
    template = Send(request=SendRequest(to="", type="template", template_name="hello", template_language="en"),
                    sender_type="system", author="test")
    assert (await conversation.ask_conversation(system, workspace_id, phone, template)).accepted
    assert outage.raised == 1
    assert (await conversation.ask_conversation(system, workspace_id, phone, template)).accepted
    assert len(platform.sent) == 2
    assert await db.fetchval("SELECT count_messages FROM conversations WHERE workspace_id = $1 AND phone = $2",
                             workspace_id, phone) == 2
    assert await db.fetchval("SELECT count(*) FROM webhook_outbox WHERE workspace_id = $1 AND event = $2",
                             workspace_id, "contact_created") == 1


async def test_a_chat_change_that_rolls_back_leaves_the_chat_as_committed(db):
    workspace_id = await builders.workspace(db)
    chat = ChatState(f"{workspace_id}:919800000020", db, WallClock())
    await chat.load()
    now = datetime.now(timezone.utc)
    with pytest.raises(RuntimeError, match="crash before commit"):
        async with chat.transaction() as tx:
            await chat.ensure_chat(tx, profile_name="", at=now, author="test")
            raise RuntimeError("crash before commit")
    assert chat.row is None
    assert await db.fetchval("SELECT count(*) FROM conversations WHERE workspace_id = $1", workspace_id) == 0
    assert await db.fetchval("SELECT count(*) FROM webhook_outbox WHERE workspace_id = $1", workspace_id) == 0

    async with chat.transaction() as tx:
        await chat.ensure_chat(tx, profile_name="", at=now, author="test")
    created = chat.row
    assert created is not None

    # commit() commits the block: a failure after it keeps the change, and the chat knows the row it wrote.
    with pytest.raises(RuntimeError, match="crash after commit"):
        async with chat.transaction() as tx:
            await chat.commit(tx, {"unread_count": 3}, [OutboxEvent("conversation_seen", "test", {})], now)
            raise RuntimeError("crash after commit")
    assert (chat.row["unread_count"], chat.row["version"]) == (3, created["version"] + 1)
    assert await db.fetchval("SELECT count(*) FROM webhook_outbox WHERE workspace_id = $1 AND event = $2",
                             workspace_id, "conversation_seen") == 1
    with pytest.raises(RuntimeError, match="after the unit of work committed"):
        async with chat.transaction() as tx:
            await chat.commit(tx, {"unread_count": 4}, [], now)
            await tx.execute("SELECT 1")

    async with chat.transaction() as tx:
        await chat.commit(tx, {"unread_count": 5}, [], now)
    assert (chat.row["unread_count"], chat.row["version"]) == (5, created["version"] + 3)
    assert await db.fetchval("SELECT version FROM conversations WHERE id = $1", created["id"]) == chat.row["version"]



async def test_a_message_is_stored_with_its_chat_s_changes_and_event_in_one_statement_or_not_at_all(db):
    """ChatState.commit_message: the event gets the stored message's id; a message stored before writes nothing;
    a row that moved meanwhile keeps the message out too (the statement's parts stand or fall together)."""
    workspace_id = await builders.workspace(db)
    chat = ChatState(f"{workspace_id}:919800000021", db, WallClock())
    await chat.load()
    now = datetime.now(timezone.utc)
    async with chat.transaction() as tx:
        await chat.ensure_chat(tx, profile_name="", at=now, author="test")
    created = chat.row

    def message(platform_id: str) -> dict:
        return dict(workspace_id=workspace_id, conversation_id=created["id"], platform_message_id=platform_id,
                    direction="inbound", sender_type="customer", type="text", text="hi", status="received",
                    source="whatsapp", sent_at=now, status_at=now)

    def counted(n: int) -> dict:
        return {"count_messages": n, "last_message_id": NEW_MESSAGE_ID}

    async with chat.transaction() as tx:
        stored = await chat.commit_message(tx, message("wamid.one"), counted(1),
                                           [OutboxEvent("message_received", "customer", {"id": None})], now)
    assert chat.row["last_message_id"] == stored["id"] and chat.row["version"] == created["version"] + 1
    assert await db.fetchval("SELECT (data ->> 'id')::bigint FROM webhook_outbox WHERE workspace_id = $1 AND"
                             " event = 'message_received'", workspace_id) == stored["id"]

    with pytest.raises(LookupError, match="stored before"):
        async with chat.transaction() as tx:
            if await chat.commit_message(tx, message("wamid.one"), counted(2), [], now) is None:
                raise LookupError("stored before")
    assert chat.row["count_messages"] == 1

    await db.execute("UPDATE conversations SET version = version + 1 WHERE id = $1", created["id"])
    with pytest.raises(VersionConflict):
        async with chat.transaction() as tx:
            await chat.commit_message(tx, message("wamid.two"), counted(2),
                                      [OutboxEvent("message_received", "customer", {"id": None})], now)
    assert await db.fetchval("SELECT count(*) FROM messages WHERE workspace_id = $1", workspace_id) == 1
    assert await db.fetchval("SELECT count(*) FROM webhook_outbox WHERE workspace_id = $1 AND"
                             " event = 'message_received'", workspace_id) == 1
    assert await db.fetchval("SELECT count_messages FROM conversations WHERE id = $1", created["id"]) == 1

async def test_first_contact_appends_contact_created_before_the_message_in_one_transaction(db, chats):
    system, workspace_id, _ = chats
    phone = "919800000099"
    await conversation.ask_conversation(system, workspace_id, phone, inbound(phone))
    await conversation.ask_conversation(system, workspace_id, phone, inbound(phone, "again"))
    rows = await db.fetch("SELECT event, xmin::text AS tx FROM webhook_outbox WHERE workspace_id = $1"
                          " AND data->>'phone' = $2 ORDER BY id", workspace_id, phone)
    assert [row["event"] for row in rows] == ["contact_created", "message_received", "message_received"]
    assert rows[0]["tx"] == rows[1]["tx"] != rows[2]["tx"]


async def test_a_send_with_no_pacer_to_ask_fails_at_once_and_is_never_left_in_doubt(db, nursery):
    """No slot can be asked for (the service stopping refuses new actors; here the pacer cannot start): the
    platform is not called, and the pending message is settled as failed instead of crashing the chat."""
    class NoPacer(Actor):
        async def on_start(self) -> None:
            raise RuntimeError("the pacer cannot start")

        async def receive(self, message: object) -> object:
            raise AssertionError("never started")

    platform = RecordingPlatform()
    deps = ConversationDeps(db=db, clock=WallClock(), platform=platform, responder=None)
    system = ActorSystem([conversation_kind(deps), ActorKind(name=send_pacer.KIND, factory=NoPacer)])
    await nursery.start(system.run)
    workspace_id = await builders.workspace(db)
    phone = "919800000031"
    await conversation.ask_conversation(system, workspace_id, phone, inbound(phone))
    outcome = await conversation.ask_conversation(system, workspace_id, phone, reply())
    assert not outcome.accepted and outcome.failure.code == 131000, outcome
    assert "pacer" in outcome.failure.title.lower()
    assert platform.sent == []
    statuses = await db.fetch("SELECT m.status FROM messages m JOIN conversations c ON c.id = m.conversation_id"
                              " WHERE c.phone = $1 AND m.direction = 'outbound'", phone)
    assert [row["status"] for row in statuses] == ["failed"]
    await system.shutdown(2)


async def test_a_chat_s_first_commit_makes_its_contact_and_conversation_in_the_same_statement(db):
    """ChatState.commit with `new_chat`: one statement, no BEGIN or COMMIT, makes the contact, the chat with the
    changes on a new chat's values and `contact_created` before the block's events; the values the service
    assumes for a new contact and chat (first_contact_row, NEW_CONVERSATION) are the schema's."""
    workspace_id = await builders.workspace(db)
    chat = ChatState(f"{workspace_id}:919800000022", db, WallClock())
    await chat.load()
    now = datetime.now(timezone.utc)
    statements: list[str] = []
    async with chat.transaction() as tx:
        tx._connection.add_query_logger(lambda record: statements.append(record.query))
        changes = {"count_messages": chat.row_or_new["count_messages"] + 1, "unread_count": 2}
        await chat.commit(tx, changes, [OutboxEvent("conversation_seen", "test", {"n": 1})], now,
                          new_chat=NewChat(profile_name="Asha", author="customer"))
    # (asyncpg's own reads of the types, the first time a connection meets them, aside)
    assert [sql for sql in statements if sql.startswith(("BEGIN", "COMMIT", "WITH made", "INSERT"))] == [
        next(sql for sql in statements if sql.startswith("WITH made AS (INSERT INTO contacts"))]
    made = chat.row
    assert (made["count_messages"], made["unread_count"], made["last_activity_at"]) == (1, 2, now)
    stored = await db.fetchrow("SELECT * FROM conversations WHERE id = $1", made["id"])
    assert stored == made
    assert {name: stored[name] for name in NEW_CONVERSATION} == {
        **NEW_CONVERSATION, "count_messages": 1, "unread_count": 2}
    contact = await db.fetchrow("SELECT * FROM contacts WHERE id = $1", made["contact_id"])
    assert {name: contact[name] for name in contact.keys() if name != "id"} == {
        **first_contact_row(workspace_id, "919800000022", "Asha", now), "custom_attributes": "{}"}
    queued = await db.fetch("SELECT event, actor, data FROM webhook_outbox WHERE workspace_id = $1 ORDER BY id",
                            workspace_id)
    assert [(row["event"], row["actor"]) for row in queued] == [("contact_created", "customer"),
                                                               ("conversation_seen", "test")]
    assert json.loads(queued[0]["data"]) == contact_event_data(contact)


async def test_a_first_commit_for_a_number_with_a_contact_queues_no_contact_created(db):
    workspace_id = await builders.workspace(db)
    contact_id = await db.fetchval("INSERT INTO contacts (workspace_id, phone, name) VALUES ($1, $2, 'Bo')"
                                   " RETURNING id", workspace_id, "919800000023")
    chat = ChatState(f"{workspace_id}:919800000023", db, WallClock())
    await chat.load()
    async with chat.transaction() as tx:
        await chat.commit(tx, {"count_messages": 1}, [OutboxEvent("conversation_seen", "test", {})],
                          datetime.now(timezone.utc), new_chat=NewChat(profile_name="Asha", author="customer"))
    assert chat.row["contact_id"] == contact_id
    assert await outbox_names(db, workspace_id) == ["conversation_seen"]
    assert await db.fetchval("SELECT name FROM contacts WHERE id = $1", contact_id) == "Bo"


async def test_a_first_commit_that_cannot_see_a_contact_made_meanwhile_makes_the_chat_one_step_at_a_time(db):
    """Another transaction makes the number's contact while the first commit's statement waits on it: that
    statement's snapshot cannot see it, so it writes nothing, and the chat is made in steps, once."""
    workspace_id = await builders.workspace(db)
    phone = "919800000024"
    chat = ChatState(f"{workspace_id}:{phone}", db, WallClock())
    await chat.load()

    async def first_commit():
        async with chat.transaction() as tx:
            await chat.commit(tx, {"count_messages": 1}, [OutboxEvent("conversation_seen", "test", {})],
                              datetime.now(timezone.utc), new_chat=NewChat(profile_name="Asha", author="customer"))

    async def waiting_on_the_contact():
        return await db.fetchval("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                                 " AND query LIKE 'WITH made AS (INSERT INTO contacts%'")

    async with trio.open_nursery() as nursery:
        async with db.transaction() as other:
            contact_id = await other.fetchval("INSERT INTO contacts (workspace_id, phone, name) VALUES ($1, $2, 'Cy')"
                                              " RETURNING id", workspace_id, phone)
            nursery.start_soon(first_commit)
            await eventually(waiting_on_the_contact)
        # The contact commits here; the first commit's statement goes on, and finds it taken and out of sight.
    assert chat.row["contact_id"] == contact_id and chat.row["count_messages"] == 1
    assert await db.fetchval("SELECT count(*) FROM conversations WHERE workspace_id = $1", workspace_id) == 1
    assert await outbox_names(db, workspace_id) == ["conversation_seen"]


async def outbox_names(db, workspace_id: int) -> list[str]:
    return [row["event"] for row in await db.fetch("SELECT event FROM webhook_outbox WHERE workspace_id = $1"
                                                   " ORDER BY id", workspace_id)]
