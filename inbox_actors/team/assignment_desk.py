"""The assignment desk: one actor a workspace that gives waiting chats to whoever is free
(docs/team.md#automatic-assignment).

Which member takes which chat is state every hand-over, resolve and status change races on, so it has one owner: the
desk of the chat's workspace, which lives on the node holding the workspace (its writes are fenced as that node's
are). It keeps nothing in memory between rounds. A round reads the queue, the members online and what each holds,
chooses chat by chat (domain/auto_assignment.py), counts each gift before the next choice, and asks each chat to take
its member (`AutoAssign`); the chat, its single writer, takes them only if it still waits in that queue. So a chat
gets one owner, and the desk takes nobody past the capacity: only a member's own claims can.

A round runs when a chat tells the desk it began waiting or its holder let it go (`Look`), when a member chooses a
status, and every second while chats wait that nobody could take (a member whose page opens comes online without
telling anyone); otherwise every `IDLE_RECHECK` seconds. A node-wide timer looks at every workspace with automatic
assignment on and chats waiting, so a desk not running (a restart, a workspace taken over) starts within its period.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import msgspec
import trio

from inbox_actors.conversations.conversation import ask_conversation
from inbox_actors.conversations.conversation_protocol import AutoAssign, Changed
from inbox_actors.domain.auto_assignment import Round, Taker
from inbox_actors.runtime import (
    Actor,
    ActorError,
    ActorKind,
    Directory,
    Job,
    MailboxFull,
    ServedElsewhere,
    workspace_in_key,
)
from inbox_actors.team import presence
from persistence.database import Database, DatabaseUnavailable
from persistence.queries import assignment as queries

log = logging.getLogger("inbox_actors.team.assignment_desk")

ROUND_SIZE = 500
"""Chats one round looks at, longest waiting first; a full round is followed by another at once."""
WAITING_RECHECK = 1.0
IDLE_RECHECK = 30.0
RETRY_SECONDS = 2.0
CONCURRENT_ASKS = 8
"""Chats asked to take their member at once: a chat busy sending must not hold the whole queue up."""
TIMER_EVERY = 10.0


ASSIGNMENT_DESK = "assignment_desk"
"""The kind: one desk a workspace, keyed by its id."""


class Look(msgspec.Struct, frozen=True):
    """Something changed that automatic assignment may act on (a chat began waiting, a holder let one go, a member
    chose a status, the settings were saved): look at the queue now."""


@dataclass(frozen=True)
class AssignmentDeskDeps:
    db: Database


class AssignmentDesk(Actor):
    def __init__(self, key: str, deps: AssignmentDeskDeps) -> None:
        super().__init__(key)
        self.db = deps.db
        self.workspace_id = workspace_in_key(key)
        self._wake = trio.Event()

    async def on_start(self) -> None:
        self.tasks.start_soon(self._keep_assigning, name=f"assignment desk {self.key}")

    async def receive(self, message: object) -> object:
        if isinstance(message, Look):
            self._wake.set()
            return None
        raise TypeError(f"assignment desk cannot handle {type(message).__name__}")

    async def _keep_assigning(self) -> None:
        while True:
            self._wake = trio.Event()
            try:
                outcome = await self.round()
            except DatabaseUnavailable as err:
                log.warning("assignment desk %s: a round failed (%s); retrying in %gs", self.key, err,
                            RETRY_SECONDS)
                outcome = "retry"
            if outcome == "more":
                continue
            wait = {"waiting": WAITING_RECHECK, "retry": RETRY_SECONDS}.get(outcome, IDLE_RECHECK)
            with trio.move_on_after(wait):
                await self._wake.wait()

    async def round(self) -> str:
        """Give what can be given now: "more" (a full round gave chats: look again at once), "waiting" (chats wait
        that nobody online could take) or "done"."""
        settings = await queries.settings(self.db, self.workspace_id)
        if settings is None or settings["mode"] == "off":
            return "done"
        chats = await queries.waiting_chats(self.db, self.workspace_id, ROUND_SIZE)
        if not chats:
            return "done"
        choices = Round(settings["mode"], settings["capacity"], await self._online_takers())
        given = 0
        left = 0

        async def give(phone: str, routed_team: int | None, taker: Taker) -> None:
            nonlocal given
            async with limiter:
                try:
                    answer = await ask_conversation(self.actors, self.workspace_id, phone,
                                                    AutoAssign(taker.member_id, routed_team))
                except ServedElsewhere:
                    answer = None      # the workspace moved: its new node's desk carries on
                except ActorError as err:
                    log.warning("assignment desk %s: chat %s not given yet: %s", self.key, phone, err)
                    answer = None
            if isinstance(answer, Changed):
                given += 1
            else:
                choices.taken_back(taker)

        limiter = trio.CapacityLimiter(CONCURRENT_ASKS)
        async with trio.open_nursery() as nursery:
            for chat in chats:
                taker = choices.choose(chat["team_id"])
                if taker is None:
                    left += 1
                    continue
                # Counted before the chat is asked, so the next choice already sees it.
                choices.given(taker)
                nursery.start_soon(give, chat["phone"], chat["routed_team"], taker)
        if len(chats) == ROUND_SIZE and given:
            return "more"
        return "waiting" if left or given < len(chats) else "done"

    async def _online_takers(self) -> list[Taker]:
        rows = await queries.takers(self.db, self.workspace_id)
        if not rows:
            return []
        availability = await presence.of_members(self.db, self.workspace_id, [row["member_id"] for row in rows])
        return [Taker(row["member_id"], row["open_chats"], row["last_given_at"], frozenset(row["teams"]))
                for row in rows if availability[row["member_id"]].status == "online"]


def assignment_desk_kind(deps: AssignmentDeskDeps) -> ActorKind:
    return ActorKind(name=ASSIGNMENT_DESK, factory=lambda key: AssignmentDesk(key, deps), mailbox_capacity=64,
                     idle_timeout=600.0, workspace_of=workspace_in_key)


def look(actors: Directory, workspace_id: int) -> None:
    """Tell the workspace's desk to look now (a full mailbox: it is about to)."""
    try:
        actors.ref(ASSIGNMENT_DESK, str(workspace_id)).tell_nowait(Look())
    except (MailboxFull, ActorError):
        pass


def desk_timer(db: Database, every: float = TIMER_EVERY) -> Job:
    """Wake the desk of every workspace with automatic assignment on and chats waiting (those this node holds)."""

    async def wake_desks(actors: Directory) -> None:
        for workspace_id in await queries.workspaces_waiting(db):
            look(actors, workspace_id)

    return Job(every, wake_desks)
