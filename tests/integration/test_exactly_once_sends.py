"""Exactly-once sends against a real PostgreSQL, with a platform of our own making: the message is committed as
pending before the platform is called, a crash between the platform's answer and the commit of the outcome
leaves it in doubt (never sent again, the key answering 409), and the status the platform posts for it, carrying
its id as callback data, settles it; a send nobody settles is given up."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
import trio

from inbox_actors.conversations import conversation, send_records
from inbox_actors.conversations import idempotency_keys as idempotency
from inbox_actors.conversations.conversation import (
    ConversationDeps,
    CustomerWrote,
    Send,
    StatusReported,
    conversation_kind,
)
from inbox_actors.conversations.idempotency_keys import InDoubt, InProgress, Replay, Reservation
from inbox_actors.conversations.in_doubt_sweeper import in_doubt_job
from inbox_actors.conversations.send_pacer import send_pacer_kind
from inbox_actors.conversations.status_writer import status_writer_kind, write_statuses
from inbox_actors.platform.payloads import InboundMessage, SendAccepted, SendRefused, SendRequest, StatusUpdate
from inbox_actors.runtime import ActorCrashed, ActorSystem, start_timers, timer_kind
from inbox_actors.runtime.clock import WallClock
from tests import builders
from tests.faults import records_a_send_outcome

HASH = idempotency.request_hash("POST", "/api/send-message", b'{"to": "919800000100", "message": "hi"}')


class Platform:
    """Accepts every send (or answers `refusal`), keeping what it was sent; `on_send` looks at the world as the
    platform is called."""

    def __init__(self) -> None:
        self.sent: list[SendRequest] = []
        self.refusal: SendRefused | None = None
        self.on_send = None

    async def send(self, phone_number_id: str, request: SendRequest) -> SendAccepted | SendRefused:
        self.sent.append(request)
        if self.on_send is not None:
            await self.on_send(request)
        return self.refusal or SendAccepted(message_id=f"wamid.once-{len(self.sent)}")


@pytest.fixture
async def chats(db, nursery):
    platform = Platform()
    deps = ConversationDeps(db=db, clock=WallClock(), platform=platform, responder=None)
    system = ActorSystem([conversation_kind(deps), send_pacer_kind(), status_writer_kind(db, WallClock()),
                          timer_kind({"in-doubt sends": in_doubt_job(db, every=3600)})])
    await nursery.start(system.run)
    workspace_id = await builders.workspace(db)
    yield system, workspace_id, platform
    await system.shutdown(2)


@pytest.fixture
def crash_on_record(db):
    """The process dies between the platform's answer and the commit of the outcome (once): the outcome is not
    recorded, and the actor crashes."""
    return db.fail_next(records_a_send_outcome, RuntimeError("killed before the outcome was committed"))


def customer(phone: str, text: str = "hello") -> CustomerWrote:
    return CustomerWrote(InboundMessage(message_id=f"wamid.in-{phone}-{text}", from_phone=phone,
                                        at=datetime.now(timezone.utc), type="text", text=text))


def api_send(text: str = "Your order shipped", reservation: Reservation | None = None) -> Send:
    return Send(request=SendRequest(to="", text=text), sender_type="system", author="api_key:1",
                sender_label="shop", reservation=reservation.held() if reservation is not None else None)


def template_send() -> Send:
    return Send(request=SendRequest(to="", type="template", template_name="order_update", template_language="en"),
                sender_type="system", author="api_key:1")


def status(platform_message_id: str, phone: str, value: str, callback: str | None) -> StatusReported:
    return StatusReported(StatusUpdate(message_id=platform_message_id, recipient_phone=phone, status=value,
                                       at=datetime.now(timezone.utc), callback_data=callback))


async def events_of(db, workspace_id: int, event: str) -> int:
    return await db.fetchval("SELECT count(*) FROM webhook_outbox WHERE workspace_id = $1 AND event = $2",
                             workspace_id, event)


async def test_the_message_is_committed_pending_before_the_platform_is_called_and_its_id_travels_along(db, chats):
    system, workspace_id, platform = chats
    phone = "919800000101"
    await conversation.ask_conversation(system, workspace_id, phone, customer(phone))
    seen = []

    async def look(request: SendRequest) -> None:
        seen.append(await db.fetchrow("SELECT id, status, platform_message_id FROM messages"
                                      " WHERE direction = 'outbound'"))
        seen.append(await events_of(db, workspace_id, "message_sent"))

    platform.on_send = look
    outcome = await conversation.ask_conversation(system, workspace_id, phone, api_send())
    pending, events_then = seen
    assert (pending["status"], pending["platform_message_id"], events_then) == ("pending", None, 0)
    assert platform.sent[0].callback_data == str(pending["id"]) == str(outcome.message_row["id"])
    row = await db.fetchrow("SELECT status, platform_message_id FROM messages WHERE id = $1", pending["id"])
    assert (row["status"], row["platform_message_id"]) == ("sent", outcome.platform_message_id)
    assert await events_of(db, workspace_id, "message_sent") == 1


async def test_a_crash_after_the_platform_answered_is_settled_by_its_status_and_never_sent_again(
        db, chats, crash_on_record):
    system, workspace_id, platform = chats
    phone = "919800000102"
    await conversation.ask_conversation(system, workspace_id, phone, customer(phone))
    counted = await db.fetchval("SELECT count_messages FROM conversations WHERE phone = $1", phone)
    now = datetime.now(timezone.utc)
    reservation = await idempotency.replay_or_reserve(db, workspace_id, "order-7", HASH, now=now)
    with pytest.raises(ActorCrashed):
        await conversation.ask_conversation(system, workspace_id, phone, api_send(reservation=reservation))
    [request] = platform.sent
    row = await db.fetchrow("SELECT * FROM messages WHERE direction = 'outbound'")
    assert (row["status"], row["idempotency_key"], str(row["id"])) == ("pending", "order-7", request.callback_data)

    # In doubt: the key is neither released nor taken over, and every retry is told so; nothing is sent again.
    assert not await idempotency.release(db, reservation)
    later = now + idempotency.ABANDONED_AFTER + timedelta(minutes=1)
    assert await idempotency.replay_or_reserve(db, workspace_id, "order-7", HASH, now=later) == InDoubt()
    assert await db.fetchval("SELECT count_messages FROM conversations WHERE phone = $1", phone) == counted
    assert await events_of(db, workspace_id, "message_sent") == 0

    # The platform's status names the message by the id nobody stored, and by its callback data: the status
    # writer leaves it to the chat the pending message belongs to, whatever number the platform reports.
    lost_id = "wamid.lost-answer"
    reported = status(lost_id, "0", "sent", request.callback_data).update
    written = await write_statuses(system, workspace_id, [reported])
    assert (written.for_chats, written.recorded) == (((phone, reported),), 0)
    await conversation.ask_conversation(system, workspace_id, phone, status(lost_id, phone, "sent",
                                                                            request.callback_data))
    settled = await db.fetchrow("SELECT * FROM messages WHERE id = $1", row["id"])
    assert (settled["status"], settled["platform_message_id"]) == ("sent", lost_id)
    assert await db.fetchval("SELECT count_messages FROM conversations WHERE phone = $1", phone) == counted + 1
    assert await db.fetchval("SELECT last_message_id FROM conversations WHERE phone = $1", phone) == row["id"]
    assert await events_of(db, workspace_id, "message_sent") == 1
    assert await idempotency.replay_or_reserve(db, workspace_id, "order-7", HASH, now=later) == Replay(
        200, {"success": True, "messageId": lost_id, "channel": "whatsapp"})

    # Later statuses are the message's as usual: delivered clears the wait; a repeat changes nothing.
    await conversation.ask_conversation(system, workspace_id, phone, status(lost_id, phone, "delivered",
                                                                            request.callback_data))
    await conversation.ask_conversation(system, workspace_id, phone, status(lost_id, phone, "sent",
                                                                            request.callback_data))
    assert await db.fetchval("SELECT status FROM messages WHERE id = $1", row["id"]) == "delivered"
    assert await db.fetchval("SELECT waiting_since FROM conversations WHERE phone = $1", phone) is None
    assert await db.fetchval("SELECT count_messages FROM conversations WHERE phone = $1", phone) == counted + 1
    assert await events_of(db, workspace_id, "message_sent") == 1
    assert len(platform.sent) == 1


async def test_a_lost_first_send_makes_its_chat_when_a_status_settles_it(db, chats, crash_on_record):
    system, workspace_id, platform = chats
    phone = "919800000103"
    with pytest.raises(ActorCrashed):
        await conversation.ask_conversation(system, workspace_id, phone, template_send())
    row = await db.fetchrow("SELECT * FROM messages")
    assert (row["status"], row["conversation_id"], row["recipient"]) == ("pending", None, phone)
    assert await db.fetchval("SELECT count(*) FROM conversations") == 0
    # The platform's "sent" was lost too: "delivered" is the first status to arrive.
    callback = platform.sent[0].callback_data
    await conversation.ask_conversation(system, workspace_id, phone, status("wamid.first", phone, "delivered",
                                                                            callback))
    chat = await db.fetchrow("SELECT * FROM conversations WHERE phone = $1", phone)
    settled = await db.fetchrow("SELECT * FROM messages WHERE id = $1", row["id"])
    assert (settled["conversation_id"], settled["status"], settled["platform_message_id"]) == (
        chat["id"], "delivered", "wamid.first")
    assert (chat["count_messages"], chat["last_message_id"]) == (1, row["id"])
    assert [await events_of(db, workspace_id, event) for event in ("contact_created", "message_sent",
                                                                   "message_status")] == [1, 1, 1]


async def test_a_status_names_only_this_chat_s_unsettled_sends(db, chats):
    system, workspace_id, platform = chats
    phone, other = "919800000104", "919800000105"
    for number in (phone, other):
        await conversation.ask_conversation(system, workspace_id, number, customer(number))
    sent = await conversation.ask_conversation(system, workspace_id, phone, api_send())
    # A callback naming a message that is settled, or another chat's, settles nothing.
    for number in (phone, other):
        await conversation.ask_conversation(system, workspace_id, number, status(
            "wamid.stranger", number, "sent", str(sent.message_row["id"])))
    assert await db.fetchval("SELECT platform_message_id FROM messages WHERE id = $1", sent.message_row["id"]) \
        == sent.platform_message_id
    assert await db.fetchval("SELECT count(*) FROM receipts") == 0


async def test_a_send_whose_key_another_request_took_sends_nothing(db, chats):
    system, workspace_id, platform = chats
    phone = "919800000106"
    await conversation.ask_conversation(system, workspace_id, phone, customer(phone))
    now = datetime.now(timezone.utc)
    stale = await idempotency.replay_or_reserve(db, workspace_id, "k", HASH, now=now)
    assert await idempotency.release(db, stale)  # e.g. its ask timed out before the chat got to it
    fresh = await idempotency.replay_or_reserve(db, workspace_id, "k", HASH, now=now + timedelta(seconds=1))
    outcome = await conversation.ask_conversation(system, workspace_id, phone, api_send(reservation=stale))
    assert (outcome.refused_status, outcome.refused_sentence) == (409, idempotency.STILL_IN_PROGRESS)
    assert platform.sent == []
    assert await db.fetchval("SELECT count(*) FROM messages WHERE direction = 'outbound'") == 0
    assert await idempotency.replay_or_reserve(db, workspace_id, "k", HASH, now=now) == InProgress()
    assert (await conversation.ask_conversation(system, workspace_id, phone, api_send(reservation=fresh))).accepted
    assert len(platform.sent) == 1


async def test_a_refused_first_send_leaves_no_chat_and_its_key_answers_the_refusal(db, chats):
    system, workspace_id, platform = chats
    platform.refusal = SendRefused(message="Message undeliverable", code=131026, title="Message undeliverable")
    reservation = await idempotency.replay_or_reserve(db, workspace_id, "k", HASH, now=datetime.now(timezone.utc))
    outcome = await conversation.ask_conversation(system, workspace_id, "999123456789", Send(
        request=template_send().request, sender_type="system", author="api_key:1", reservation=reservation.held()))
    assert outcome.failure.code == 131026 and outcome.message_row is None
    assert await db.fetchval("SELECT count(*) FROM conversations") == 0
    assert await db.fetchval("SELECT status FROM messages") == "failed"
    replay = await idempotency.replay_or_reserve(db, workspace_id, "k", HASH)
    assert isinstance(replay, Replay) and replay.status == 500 and replay.body["errorCode"] == 131026


async def test_a_send_nobody_settles_is_given_up_as_failed_and_a_late_status_still_settles_it(
        db, chats, crash_on_record):
    system, workspace_id, platform = chats
    phone = "919800000107"
    await conversation.ask_conversation(system, workspace_id, phone, customer(phone))
    reservation = await idempotency.replay_or_reserve(db, workspace_id, "k", HASH, now=datetime.now(timezone.utc))
    with pytest.raises(ActorCrashed):
        await conversation.ask_conversation(system, workspace_id, phone, api_send(reservation=reservation))
    message_id = await db.fetchval("SELECT id FROM messages WHERE status = 'pending'")
    young = await db.fetchval("SELECT count(*) FROM messages WHERE status = 'pending'")
    await db.execute("UPDATE messages SET sent_at = sent_at - $2::interval WHERE id = $1", message_id,
                     send_records.IN_DOUBT_LIFETIME + timedelta(minutes=1))
    await start_timers(system, ["in-doubt sends"])
    with trio.fail_after(5):
        while await db.fetchval("SELECT status FROM messages WHERE id = $1", message_id) == "pending":
            await trio.sleep(0.02)
    given_up = await db.fetchrow("SELECT * FROM messages WHERE id = $1", message_id)
    assert young == 1 and given_up["status"] == "failed" and given_up["error_code"] == 131000
    assert "not sent again" in given_up["error_text"]
    assert await db.fetchval("SELECT count_messages FROM conversations WHERE phone = $1", phone) == 2
    replay = await idempotency.replay_or_reserve(db, workspace_id, "k", HASH)
    assert isinstance(replay, Replay) and replay.status == 500
    assert replay.body["errorCode"] == 131000 and replay.body["error"] == "Send outcome unknown"

    # The platform had it after all: its status, however late, is the truth about the message (counted once).
    await conversation.ask_conversation(system, workspace_id, phone, status("wamid.late", phone, "read",
                                                                            platform.sent[0].callback_data))
    settled = await db.fetchrow("SELECT status, platform_message_id, error_code FROM messages WHERE id = $1",
                                message_id)
    assert tuple(settled) == ("read", "wamid.late", None)
    assert await db.fetchval("SELECT count_messages FROM conversations WHERE phone = $1", phone) == 2
    assert await events_of(db, workspace_id, "message_sent") == 1
    assert len(platform.sent) == 1


async def test_consent_read_with_the_pending_insert_still_refuses_an_opted_out_contact_first(db, chats):
    system, workspace_id, platform = chats
    phone = "919800000108"
    await conversation.ask_conversation(system, workspace_id, phone, customer(phone))
    await db.execute("UPDATE contacts SET opted_out = true WHERE phone = $1", phone)
    now = datetime.now(timezone.utc)
    stale = await idempotency.replay_or_reserve(db, workspace_id, "k", HASH, now=now)
    assert await idempotency.release(db, stale)
    for reservation in (None, stale):   # consent is answered before the key's own refusal
        outcome = await conversation.ask_conversation(system, workspace_id, phone, api_send(reservation=reservation))
        assert outcome.refused_status == 403 and "opted out" in outcome.refused_sentence
    assert platform.sent == []
    assert await db.fetchval("SELECT count(*) FROM messages WHERE direction = 'outbound'") == 0
