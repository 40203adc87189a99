"""The fence on what leaves the database (inbox_actors/cluster/effect_fence.py), against a real PostgreSQL: a node
whose lease deadline passed while a send was between its pending commit and the platform call does not call the
platform, and the send is answered in doubt, never as a failure to retry; one whose outcome the statement fence
refuses to write is in doubt too; a webhook (or connector hook) attempt of a node that lost the workspace is not
written to its receiver, and its event stays pending. A node alone always holds.

The pause is the owner's lease deadline passing (a keeper that does not renew, with a lease of a second) while the
send waits for its slot, and another node taking the workspace over meanwhile, as after a SIGSTOP.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from datetime import datetime, timezone

import msgspec
import pytest
import trio

from inbox_actors.cluster.effect_fence import EffectAbandoned, check_effect
from inbox_actors.cluster.leases import LeaseKeeper
from inbox_actors.cluster.placement import WorkspacePlacement
from inbox_actors.conversations import conversation, send_pacer
from inbox_actors.conversations.conversation import ConversationDeps, CustomerWrote, Send, conversation_kind
from inbox_actors.conversations.send_answers import SendInDoubt, send_answer
from inbox_actors.platform.payloads import InboundMessage, SendAccepted, SendRequest
from inbox_actors.runtime import Actor, ActorKind, ActorSystem, workspace_in_key
from inbox_actors.runtime.clock import WallClock
from inbox_actors.use_cases import keyed_sends
from inbox_actors.webhooks.address_guard import AddressGuard, parse_networks
from inbox_actors.webhooks.delivery import Destination, OutboxEvent, deliver
from inbox_actors.webhooks.transport import WebhookTransport
from persistence.statement_fence import StatementFence, fencing_statements
from tests import builders
from tests.waiting import eventually
from tests.webhook_receiver import webhook_receiver

TTL = 1.0
PHONE = "919800000401"


class Platform:
    def __init__(self) -> None:
        self.sent: list[SendRequest] = []
        self.on_send = None

    async def send(self, phone_number_id: str, request: SendRequest) -> SendAccepted:
        self.sent.append(request)
        if self.on_send is not None:
            await self.on_send()
        return SendAccepted(message_id=f"wamid.fence-{len(self.sent)}")


class StallingPacer(Actor):
    """The number's send pacer, which grants a slot only once `gate` is set: the send waits between its pending
    commit and the platform call, as a node paused there does."""

    def __init__(self, key: str, gate: trio.Event) -> None:
        super().__init__(key)
        self.gate = gate

    async def receive(self, message: object) -> object:
        assert isinstance(message, send_pacer.ReserveSlot)
        await self.gate.wait()
        return 0.0


class Owner:
    """One node holding the workspace (its keeper not renewing: its deadline passes by itself), with the chats and
    a pacer that stalls the sends until `gate` opens."""

    def __init__(self, db, workspace_id: int) -> None:
        self.db, self.workspace_id = db, workspace_id
        self.platform = Platform()
        self.gate = trio.Event()
        self.keeper = LeaseKeeper(db, "node-a", on_lost=lambda workspace: None, ttl=TTL, margin=TTL / 3)
        self.placement = WorkspacePlacement(self.keeper)
        deps = ConversationDeps(db=db, clock=WallClock(), platform=self.platform, responder=None)
        self.system = ActorSystem([
            conversation_kind(deps),
            ActorKind(name=send_pacer.KIND, factory=lambda key: StallingPacer(key, self.gate),
                      workspace_of=workspace_in_key),
        ], placement=self.placement)
        self.keeper.on_lost = self.system.evict_workspace

    async def customer_writes(self) -> None:
        await conversation.ask_conversation(self.system, self.workspace_id, PHONE, CustomerWrote(InboundMessage(
            message_id=f"wamid.in-{PHONE}", from_phone=PHONE, at=datetime.now(timezone.utc), type="text",
            text="hello")))

    async def taken_over(self) -> None:
        """The owner's deadline passes and another node takes the workspace (its lease expired in PostgreSQL)."""
        await eventually(lambda: not self.placement.holds(self.workspace_id), timeout=5)
        other = LeaseKeeper(self.db, "node-b", on_lost=lambda workspace: None)
        # The other node's statements, not under this node's fence (the platform's hook runs in the chat's task).
        with fencing_statements(None), trio.fail_after(5):
            while await other.acquire(self.workspace_id) is None:
                await trio.sleep(0.05)


@asynccontextmanager
async def owner_of(db):
    workspace_id = await builders.workspace(db)
    owner = Owner(db, workspace_id)
    async with trio.open_nursery() as nursery:
        await nursery.start(owner.system.run)
        assert await owner.placement.claim(workspace_id) is None
        yield owner
        await owner.system.shutdown(2)
        nursery.cancel_scope.cancel()


async def pending_sends(db, workspace_id: int) -> list[str]:
    return [row["status"] for row in await db.fetch(
        "SELECT status FROM messages WHERE workspace_id = $1 AND direction = 'outbound'", workspace_id)]


def api_send() -> Send:
    return Send(request=SendRequest(to="", text="Your order shipped"), sender_type="system", author="api_key:1",
                sender_label="shop")


async def test_a_paused_owner_does_not_call_the_platform_and_its_send_is_answered_in_doubt(db):
    async with owner_of(db) as owner:
        await owner.customer_writes()
        outcome = None

        async def send() -> None:
            nonlocal outcome
            outcome = await conversation.ask_conversation(owner.system, owner.workspace_id, PHONE, api_send())

        async with trio.open_nursery() as nursery:
            nursery.start_soon(send)
            await eventually(lambda: _pending(db, owner.workspace_id))     # committed; waiting for its slot
            await owner.taken_over()
            owner.gate.set()                                                 # the node wakes
        assert owner.platform.sent == [], "nothing goes to the platform for a workspace another node holds"
        assert outcome.in_doubt and not outcome.accepted
        assert await pending_sends(db, owner.workspace_id) == ["pending"], "left for the new owner to settle"

    # The API's answer: a 409 that says it may have gone out, with no Retry-After and never "try again".
    answer = send_answer(outcome)
    assert isinstance(answer, SendInDoubt)
    refusal = keyed_sends.in_doubt(keyed=False)
    assert (refusal.status, refusal.code, refusal.data) == (409, keyed_sends.SEND_IN_DOUBT, None)
    assert "may have been sent" in refusal.message and "outcome is not known" in refusal.message
    keyed = keyed_sends.in_doubt(keyed=True)
    assert (keyed.status, keyed.code, keyed.data) == (409, keyed_sends.IN_DOUBT, {"retry_after": 5})


async def test_a_send_whose_outcome_the_fence_refuses_is_in_doubt_not_a_crash(db):
    async with owner_of(db) as owner:
        await owner.customer_writes()
        owner.gate.set()
        # The node stalls after the platform accepted the send and before its outcome is written.
        owner.platform.on_send = owner.taken_over
        outcome = await conversation.ask_conversation(owner.system, owner.workspace_id, PHONE, api_send())
        assert len(owner.platform.sent) == 1
        assert outcome.in_doubt
        assert await pending_sends(db, owner.workspace_id) == ["pending"]


async def _pending(db, workspace_id: int) -> bool:
    return await pending_sends(db, workspace_id) == ["pending"]


def lapsed_fence(workspace_id: int, *, in_database: bool) -> StatementFence:
    """The fence of a task whose node's hold of the workspace has run out (its view of its epoch: None)."""
    return StatementFence(workspace_id, 1, lambda workspace: None, in_database=in_database)


async def test_a_webhook_or_hook_attempt_of_a_node_that_lost_the_workspace_is_not_written():
    guard = AddressGuard(parse_networks("127.0.0.0/8"))
    event = OutboxEvent(id=1, event="message_sent", correlation_id="evt_1", actor="system",
                        data_json=msgspec.json.encode({"phone": PHONE}).decode(), hook_id=None)
    recorded = []

    async def record(attempt) -> None:
        recorded.append(attempt)

    async with webhook_receiver() as receiver, WebhookTransport(guard) as transport:
        destination = Destination(endpoint=guard.check_url(receiver.url), secret="s" * 32)
        for hook_id in (None, 7):               # the workspace's endpoint, and a connector hook's copy
            with fencing_statements(lapsed_fence(1, in_database=True)), pytest.raises(EffectAbandoned):
                await deliver(msgspec.structs.replace(event, hook_id=hook_id), destination, transport=transport,
                              clock=WallClock(), record=record)
        assert receiver.received == [] and recorded == [], "nothing written, nothing recorded: still pending"

        # A node alone (no other node can take its workspace) always holds.
        with fencing_statements(lapsed_fence(1, in_database=False)):
            check_effect()
            await deliver(event, destination, transport=transport, clock=WallClock(), record=record)
        assert len(receiver.received) == 1 and recorded[0].outcome == "delivered"
