"""The status writer against a real PostgreSQL: statuses recorded in bulk move messages only forwards, emit one
message_status event per move, and leave to the chat's actor exactly the statuses that can change its chat."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from inbox_actors.conversations import conversation
from inbox_actors.conversations.conversation import ConversationDeps, CustomerWrote, Send, conversation_kind
from inbox_actors.conversations.send_pacer import send_pacer_kind
from inbox_actors.conversations.status_writer import status_writer_kind, write_statuses
from inbox_actors.platform.payloads import InboundMessage, SendAccepted, SendRefused, SendRequest, StatusUpdate
from inbox_actors.runtime import ActorSystem
from inbox_actors.runtime.clock import WallClock
from tests import builders

T0 = datetime(2026, 11, 23, 10, 0, tzinfo=timezone.utc)


class Platform:
    def __init__(self) -> None:
        self.sent = 0

    async def send(self, phone_number_id: str, request: SendRequest) -> SendAccepted | SendRefused:
        self.sent += 1
        return SendAccepted(message_id=f"wamid.out-{self.sent}")


@pytest.fixture
async def chats(db, nursery):
    deps = ConversationDeps(db=db, clock=WallClock(), platform=Platform(), responder=None)
    system = ActorSystem([conversation_kind(deps), send_pacer_kind(), status_writer_kind(db, WallClock())])
    await nursery.start(system.run)
    yield system, await builders.workspace(db)
    await system.shutdown(2)


async def template_to(system, workspace_id: int, phone: str) -> str:
    """A template send to a chat that waits for nobody; its platform id."""
    outcome = await conversation.ask_conversation(system, workspace_id, phone, Send(
        request=SendRequest(to="", type="template", template_name="order_update", template_language="en"),
        sender_type="system", author="api_key:1"))
    return outcome.platform_message_id


def update(platform_id: str, value: str, seconds: int = 0, **extra) -> StatusUpdate:
    return StatusUpdate(message_id=platform_id, recipient_phone="0", status=value, at=T0 + timedelta(seconds=seconds),
                        **extra)


async def message(db, platform_id: str):
    return await db.fetchrow("SELECT * FROM messages WHERE platform_message_id = $1", platform_id)


async def status_events(db, workspace_id: int) -> list[tuple[str, str]]:
    rows = await db.fetch("SELECT data FROM webhook_outbox WHERE workspace_id = $1 AND event = 'message_status'"
                          " ORDER BY id", workspace_id)
    return [(json.loads(r["data"])["message_id"], json.loads(r["data"])["status"]) for r in rows]


async def test_statuses_of_many_chats_are_recorded_in_one_batch_and_only_ever_move_forwards(db, chats):
    system, workspace_id = chats
    first = await template_to(system, workspace_id, "919800000201")
    second = await template_to(system, workspace_id, "919800000202")

    written = await write_statuses(system, workspace_id, [
        update(first, "sent"), update(second, "sent"), update(first, "read", 5), update(first, "delivered", 3),
        update(second, "delivered", 2), update(second, "delivered", 2)])  # the platform's retry of one

    assert (written.for_chats, written.recorded, written.dropped) == ((), 6, 0)
    one, two = await message(db, first), await message(db, second)
    assert (one["status"], one["status_at"]) == ("read", T0 + timedelta(seconds=5))
    assert (two["status"], two["status_at"]) == ("delivered", T0 + timedelta(seconds=2))
    receipts = await db.fetch("SELECT status, at FROM receipts WHERE message_id = $1 ORDER BY at", one["id"])
    assert [r["status"] for r in receipts] == ["sent", "delivered", "read"], "every receipt kept, late ones too"
    # One event per move: "read" moved the first message; its late "delivered" moved nothing.
    assert await status_events(db, workspace_id) == [(first, "read"), (second, "delivered")]


async def test_a_failure_replaces_only_sent_and_keeps_the_platforms_error(db, chats):
    system, workspace_id = chats
    failing = await template_to(system, workspace_id, "919800000203")
    delivered = await template_to(system, workspace_id, "919800000204")
    await write_statuses(system, workspace_id, [update(delivered, "delivered")])

    await write_statuses(system, workspace_id, [
        update(failing, "failed", 1, error_code=131026, error_title="Message undeliverable"),
        update(delivered, "failed", 1, error_code=131026, error_title="Message undeliverable")])

    failed = await message(db, failing)
    assert (failed["status"], failed["error_code"], failed["error_text"]) == ("failed", 131026,
                                                                            "Message undeliverable")
    assert (await message(db, delivered))["status"] == "delivered", "a delivered message did reach the phone"


async def test_statuses_that_can_change_a_chat_are_left_to_its_actor_in_order(db, chats):
    system, workspace_id = chats
    waiting_phone, quiet_phone = "919800000205", "919800000206"
    await conversation.ask_conversation(system, workspace_id, waiting_phone, CustomerWrote(InboundMessage(
        message_id="wamid.in-1", from_phone=waiting_phone, at=datetime.now(timezone.utc), type="text", text="hi")))
    reply = await template_to(system, workspace_id, waiting_phone)
    quiet = await template_to(system, workspace_id, quiet_phone)

    statuses = [update(reply, "sent"), update(reply, "delivered", 1), update(quiet, "delivered", 1),
                update(reply, "read", 2)]
    written = await write_statuses(system, workspace_id, statuses)

    # "sent" cannot end the wait and is written here; "delivered" can, so it and everything after it of that
    # message go to the chat, in order. The quiet chat's status is written here.
    assert written.for_chats == ((waiting_phone, statuses[1]), (waiting_phone, statuses[3]))
    assert (written.recorded, (await message(db, reply))["status"], (await message(db, quiet))["status"]) \
        == (2, "sent", "delivered")
    for _, status in written.for_chats:
        await conversation.ask_conversation(system, workspace_id, waiting_phone, conversation.StatusReported(status))
    assert (await message(db, reply))["status"] == "read"
    assert await db.fetchval("SELECT waiting_since FROM conversations WHERE phone = $1", waiting_phone) is None


async def test_statuses_for_messages_the_workspace_did_not_send_are_dropped(db, chats):
    system, workspace_id = chats
    phone = "919800000207"
    await conversation.ask_conversation(system, workspace_id, phone, CustomerWrote(InboundMessage(
        message_id="wamid.in-2", from_phone=phone, at=datetime.now(timezone.utc), type="text", text="hi")))
    other_workspace = await builders.workspace(db)
    ours = await template_to(system, workspace_id, "919800000208")

    written = await write_statuses(system, workspace_id, [
        update("wamid.nobody-sent", "delivered"), update("wamid.in-2", "read"),
        update("wamid.nobody", "read", callback_data="not-a-row-id")])
    assert (written.for_chats, written.recorded, written.dropped) == ((), 0, 3)
    written = await write_statuses(system, other_workspace, [update(ours, "read")])
    assert written.dropped == 1 and (await message(db, ours))["status"] == "sent", "another workspace's message"
    assert await db.fetchval("SELECT count(*) FROM receipts") == 0
