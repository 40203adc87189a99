"""The use cases as every front door calls them, without HTTP: real actors on a real PostgreSQL, a platform of
the test's own, and callers made as the doors make them (a member's session, a key, the operator).

    async def test_a_reason_too_long_changes_nothing(use_cases):
        caller = await use_cases.member(permissions=["inbox"])
        outcome = await use_cases.run(caller, chats.RELEASE, {"phone": PHONE, "reason": "x" * 501})
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from inbox_actors.access import sessions
from inbox_actors.broadcasts.broadcast import BroadcastDeps, broadcast_kind
from inbox_actors.broadcasts.schedule import ScheduleDeps, broadcast_schedule_kind, start_broadcast_schedule
from inbox_actors.contacts.contact_card import contact_card_kind
from inbox_actors.conversations import conversation
from inbox_actors.conversations.conversation import ConversationDeps, conversation_kind
from inbox_actors.conversations.send_pacer import send_pacer_kind
from inbox_actors.conversations.snooze_clock import SnoozeClockDeps, snooze_clock_kind, start_snooze_clock
from inbox_actors.conversations.status_writer import status_writer_kind
from inbox_actors.runtime import ActorSystem
from inbox_actors.runtime.clock import WallClock
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.outcomes import Outcome
from inbox_actors.use_cases.use_case import UseCase, run
from persistence.database import Database
from tests import builders
from tests.integration.chat_helpers import customer_writes
from tests.integration.test_conversation_actor import RecordingPlatform


@dataclass
class UseCases:
    db: Database
    deps: UseCaseDeps
    platform: RecordingPlatform
    workspace_id: int

    async def member(self, *, role: str = "agent", permissions: list[str] | None = None,
                     assigned_only: bool = False, workspace_id: int | None = None) -> Caller:
        """A member of the workspace signed in to the app, as the web pages' guard makes its caller."""
        workspace = self.workspace_id if workspace_id is None else workspace_id
        member_id = await builders.member(self.db, workspace, role, permissions, assigned_only)
        token, _ = await sessions.create_session(self.db, member_id=member_id, hours=1)
        session = await sessions.find_session(self.db, token)
        assert session is not None
        return Caller.of_session(session)

    async def run(self, caller: Caller, use_case: UseCase, arguments: Mapping[str, Any], *,
                  strict: bool = True) -> Outcome:
        return await run(self.deps, caller, use_case, arguments, strict=strict)

    async def customer_writes(self, phone: str, text: str = "hello") -> None:
        """A customer's message into the workspace's chat with `phone` (the chat is made if new)."""
        await conversation.ask_conversation(self.deps.actors, self.workspace_id, phone, customer_writes(phone, text))


@pytest.fixture
async def use_cases(db, nursery):
    clock = WallClock()
    platform = RecordingPlatform()
    chats = ConversationDeps(db=db, clock=clock, platform=platform, responder=None)
    system = ActorSystem([conversation_kind(chats), send_pacer_kind(), contact_card_kind(db, clock),
                          status_writer_kind(db, clock), broadcast_kind(BroadcastDeps(db=db, clock=clock)),
                          broadcast_schedule_kind(ScheduleDeps(db=db)),
                          snooze_clock_kind(SnoozeClockDeps(db=db))])
    await nursery.start(system.run)
    await start_broadcast_schedule(system)
    await start_snooze_clock(system)
    # Webhook settings' use cases need the address rules and the connections; a test of them builds its own.
    deps = UseCaseDeps(db, system, clock, webhook_guard=None, webhook_transport=None)  # type: ignore[arg-type]
    yield UseCases(db, deps, platform, await builders.workspace(db))
    await system.shutdown(2)
