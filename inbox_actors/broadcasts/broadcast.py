"""The broadcast actor: one per broadcast, the single writer of its status, and the sender of its recipients.

Statuses: pending_approval -> scheduled or sending (approve) or rejected; scheduled -> sending (when due, told
by the schedule); sending <-> paused (a member, or the balance running short of credits); sending -> completed
(no recipient left queued); any but completed and rejected -> cancelled. Each change is one conditional update
(with its team audit entry) so the database arbitrates between the actor's own pump and a member's call.

Sending (the pump, a task of the actor while the broadcast is sending): recipients are read in order, a batch at
a time; for each the pump takes a bulk slot from the number's send pacer (one-to-one replies go first) and
asks the recipient's conversation to send the template (`Send.broadcast`), up to `concurrency` at once. The
conversation commits the message as pending in the same statement that claims the recipient, so a recipient is
never sent twice: after a crash or `kill -9` a restarted broadcast resumes with the recipients still queued.

A recipient whose message was committed but whose outcome was lost (the node died or stopped between the commit and
the platform's answer, or abandoned the call once its lease was gone) is *in flight*, and the broadcast is not
completed while any is. The platform's status for a message it accepted comes within seconds (and is delivered
again while the service does not take it), and settles it. One still pending ORPHANED_SEND_SECONDS after this
actor first saw it in flight, at the end of a round (nothing of its own is in flight then), never reached the
platform: the recipient's conversation records it as failed and queues the recipient again in one transaction
(`GiveUpInDoubt(send_again=True)`), and the next round sends it, once. The window that remains: a message the
platform accepted whose every status stayed away for that long (the status webhook failing past the platform's
own retries) is sent twice. Outcomes:
- accepted: nothing more here (the message's statuses make the delivered and read counts);
- 130429 (throughput): queued again after RETRY_DELAYS, up to MAX_ATTEMPTS sends; other platform errors
  (131026, 131049, ...) are final and recorded on the message;
- opted out since the audience was made: skipped; a web-client chat (text only): failed;
- short of credits: the broadcast pauses (paused_reason insufficient_credits) and the recipient stays queued;
- the conversation could not be asked (failing, stopping): queued again after a short pause.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import msgspec
import trio

from inbox_actors.conversations import send_pacer
from inbox_actors.conversations.conversation import (
    BroadcastRecipient,
    GiveUpInDoubt,
    Recorded,
    Send,
    SendOutcome,
    ask_conversation,
)
from inbox_actors.domain import team_audit
from inbox_actors.platform.payloads import SendRequest
from inbox_actors.runtime import Actor, ActorError, ActorKind, workspace_in_key
from inbox_actors.runtime.clock import Clock
from persistence.database import Database, DatabaseUnavailable, Record
from persistence.queries import broadcasts as queries
from persistence.queries import team_audit as audit_queries

log = logging.getLogger("inbox_actors.broadcasts.broadcast")

KIND = "broadcast"
PENDING_APPROVAL, SCHEDULED, SENDING, PAUSED = "pending_approval", "scheduled", "sending", "paused"
COMPLETED, CANCELLED, REJECTED = "completed", "cancelled", "rejected"
THROUGHPUT = 130429
MAX_ATTEMPTS = 4
RETRY_DELAYS = (timedelta(seconds=30), timedelta(minutes=2), timedelta(minutes=10))
# A recipient whose conversation could not be asked waits this long before it is tried again.
UNREACHABLE_CHAT_DELAY = timedelta(seconds=10)
# How long a recipient in flight that this actor is not sending waits for its message's status before it is taken
# as never sent (above). Statuses come within seconds; the platform delivers one the service refused again, for a
# minute at least (the built-in simulator: 0.5 to 30 s apart).
ORPHANED_SEND_SECONDS = 30.0
# While recipients are in flight and nothing else is due, how often a round looks again.
IN_FLIGHT_POLL_SECONDS = 1.0
IN_FLIGHT_BATCH = 1_000
INSUFFICIENT_CREDITS = "insufficient_credits"
PAUSED_BY_MEMBER = "paused_by_member"
DATABASE_RETRY_SECONDS = 5.0


# -- messages ------------------------------------------------------------------------------------------------


class Due(msgspec.Struct, frozen=True):
    """Send if it is time: a scheduled broadcast whose time came, or a sending one (resumed after a restart)."""


class Decide(msgspec.Struct, frozen=True):
    """A member's call on the broadcast: approve, reject, cancel, pause or resume."""

    action: str
    member_id: int
    via: str
    reason: str | None = None


class Refused(msgspec.Struct, frozen=True):
    status: int
    code: str
    message: str


DECISIONS = ("approve", "reject", "cancel", "pause", "resume")
# What each call moves the broadcast from; anything else is 409 invalid_transition.
_FROM = {
    "approve": (PENDING_APPROVAL,),
    "reject": (PENDING_APPROVAL,),
    "cancel": (PENDING_APPROVAL, SCHEDULED, SENDING, PAUSED),
    "pause": (SENDING,),
    "resume": (PAUSED,),
}
_AUDIT = {"approve": team_audit.BROADCAST_APPROVED, "reject": team_audit.BROADCAST_REJECTED,
          "cancel": team_audit.BROADCAST_CANCELLED, "pause": team_audit.BROADCAST_PAUSED,
          "resume": team_audit.BROADCAST_RESUMED}


@dataclass(frozen=True)
class BroadcastDeps:
    db: Database
    clock: Clock
    sends_per_second: int = 80          # the number's throughput (the send pacer's limit)
    concurrency: int = 16               # sends of one broadcast in flight at once
    batch: int = 500                    # recipients read at a time
    orphaned_after: float | None = None     # ORPHANED_SEND_SECONDS unless given


class Broadcast(Actor):
    def __init__(self, key: str, deps: BroadcastDeps) -> None:
        super().__init__(key)
        self.deps = deps
        self.id = int(key.partition(":")[2])
        self.row: Record | None = None
        self._pumping = False
        self._changed = trio.Event()   # set when the status moves, so a sleeping pump looks again
        # Recipients in flight that this actor is not sending (their node stopped mid-send), by position: since when
        # it has seen them so (trio time).
        self._in_flight_since: dict[int, float] = {}
        self._in_flight_seen = False

    async def on_start(self) -> None:
        self.row = await queries.broadcast_by_id(self.deps.db, self.id)
        if self.row is None:
            return
        self._phone_number_id = await self.deps.db.fetchval(
            "SELECT phone_number_id FROM workspaces WHERE id = $1", self.row["workspace_id"])
        if self.row["status"] == SENDING:
            self._start_pump()

    async def receive(self, message: object) -> object:
        if self.row is None:
            return Refused(404, "broadcast_not_found", "No such broadcast.")
        if isinstance(message, Due):
            return await self._due()
        if isinstance(message, Decide):
            return await self._decide(message)
        return await super().receive(message)

    # -- status --------------------------------------------------------------------------------------------

    async def _due(self) -> Record:
        row = self.row
        now = self.deps.clock.now()
        if row["status"] == SCHEDULED and row["scheduled_at"] <= now:
            changed = await queries.change_status(self.deps.db, self.id, among=(SCHEDULED,), to=SENDING,
                                                  started_at=now)
            self._moved(changed)
        if self.row["status"] == SENDING:
            self._start_pump()
        return self.row

    async def _decide(self, call: Decide) -> Record | Refused:
        row, now = self.row, self.deps.clock.now()
        if call.action not in _FROM:
            raise ValueError(f"unknown broadcast action {call.action!r}")
        if row["status"] not in _FROM[call.action]:
            return Refused(409, "invalid_transition", f"This broadcast is {_words(row['status'])} and cannot be "
                           f"{_PAST[call.action]}; only a {_either(_FROM[call.action])} broadcast can.")
        to, values = self._target(call, now)
        async with self.deps.db.transaction() as tx:
            changed = await queries.change_status(tx, self.id, among=_FROM[call.action], to=to, **values)
            if changed is None:
                # The pump moved it meanwhile (completed, paused for credits): judged again on what it is now.
                self.row = await queries.broadcast_by_id(tx, self.id)
                return Refused(409, "invalid_transition", f"This broadcast is {_words(self.row['status'])} now "
                               f"and cannot be {_PAST[call.action]}.")
            if to in (CANCELLED, REJECTED):
                await queries.cancel_queued(tx, self.id)
            await audit_queries.record(tx, workspace_id=row["workspace_id"], at=now, member_id=call.member_id,
                                       via=call.via, action=_AUDIT[call.action],
                                       subject=team_audit.broadcast_subject(self.id),
                                       details={"name": row["name"], "status": to,
                                                **({"reason": call.reason} if call.reason else {})})
        self._moved(changed)
        if to == SENDING:
            self._start_pump()
        return self.row

    def _target(self, call: Decide, now: datetime) -> tuple[str, dict[str, Any]]:
        row = self.row
        if call.action == "approve":
            later = row["scheduled_at"] is not None and row["scheduled_at"] > now
            values = {"decided_by": call.member_id, "decided_at": now}
            return (SCHEDULED, values) if later else (SENDING, {**values, "started_at": now})
        if call.action == "reject":
            return REJECTED, {"decided_by": call.member_id, "decided_at": now, "rejection_reason": call.reason,
                              "finished_at": now}
        if call.action == "cancel":
            return CANCELLED, {"cancelled_by": call.member_id, "finished_at": now}
        if call.action == "pause":
            return PAUSED, {"paused_reason": PAUSED_BY_MEMBER}
        return SENDING, {"paused_reason": None, "started_at": row["started_at"] or now}

    def _moved(self, row: Record | None) -> None:
        if row is not None:
            self.row = row
            self._changed.set()
            self._changed = trio.Event()

    # -- sending -------------------------------------------------------------------------------------------

    def _start_pump(self) -> None:
        if not self._pumping:
            self._pumping = True
            self.tasks.start_soon(self._pump, name=f"broadcast {self.id}")

    async def _pump(self) -> None:
        try:
            while self.row["status"] == SENDING:
                try:
                    await self._send_round()
                except* DatabaseUnavailable as lost:
                    # Every recipient's state is in PostgreSQL; carry on once it answers.
                    log.warning("broadcast %s cannot reach the database (%s); retrying", self.id, lost.exceptions[0])
                    await trio.sleep(DATABASE_RETRY_SECONDS)
        finally:
            self._pumping = False

    async def _send_round(self) -> None:
        """Send every recipient due now, in order; then complete, or sleep until the next retry is due."""
        deps = self.deps
        if not self._in_flight_seen:
            # What a node that stopped left in flight waits from this actor's start, not from its first round's end.
            now = trio.current_time()
            self._in_flight_since = {row["position"]: now for row in
                                     await queries.in_flight_recipients(deps.db, self.id, IN_FLIGHT_BATCH)}
            self._in_flight_seen = True
        # Nothing is in flight between rounds: a throughput refusal still claimed lost its retry to a crash.
        await queries.requeue_refused_for_throughput(deps.db, self.id, code=THROUGHPUT, max_attempts=MAX_ATTEMPTS,
                                                     at=deps.clock.now())
        slots = trio.Semaphore(deps.concurrency)
        after = 0
        async with trio.open_nursery() as nursery:
            while self.row["status"] == SENDING:
                batch = await queries.queued_recipients(deps.db, self.id, after_position=after,
                                                        now=deps.clock.now(), limit=deps.batch)
                if not batch:
                    break
                for recipient in batch:
                    if self.row["status"] != SENDING:
                        break
                    await slots.acquire()
                    await send_pacer.wait_for_bulk_slot(self.actors, self.row["workspace_id"], self._phone_number_id,
                                                    deps.sends_per_second)
                    nursery.start_soon(self._send_one, recipient, slots)
                    after = recipient["position"]
        if self.row["status"] != SENDING:
            return
        any_queued, next_at = await queries.next_attempt_at(deps.db, self.id)
        # Nothing of this actor's own is in flight between rounds: whatever is was left by a node that stopped.
        in_flight = await queries.in_flight_recipients(deps.db, self.id, IN_FLIGHT_BATCH)
        if not any_queued and not in_flight:
            now = deps.clock.now()
            self._moved(await queries.change_status(deps.db, self.id, among=(SENDING,), to=COMPLETED,
                                                    finished_at=now))
            log.info("broadcast %s completed", self.id)
            return
        if await self._send_again_if_never_sent(in_flight):
            return                               # queued again: the next round sends them
        wait = (next_at - deps.clock.now()).total_seconds() if next_at is not None else 0.0 if any_queued \
            else IN_FLIGHT_POLL_SECONDS
        if in_flight:
            # A status settles one without telling this actor: looked at again soon.
            wait = min(wait, IN_FLIGHT_POLL_SECONDS)
        if wait > 0:
            changed = self._changed
            with trio.move_on_after(wait):
                await changed.wait()

    async def _send_again_if_never_sent(self, in_flight: list[Record]) -> bool:
        """Of the recipients in flight (none of them this actor's own), those it has seen so for ORPHANED_SEND_SECONDS
        are given up as never sent and queued again by their conversation: whether any was."""
        now = trio.current_time()
        since = {row["position"]: self._in_flight_since.get(row["position"], now) for row in in_flight}
        self._in_flight_since = since
        after = self.deps.orphaned_after if self.deps.orphaned_after is not None else ORPHANED_SEND_SECONDS
        overdue = [row for row in in_flight if now - since[row["position"]] >= after]
        again = 0
        for row in overdue:
            try:
                recorded = await ask_conversation(self.actors, self.row["workspace_id"], row["phone"],
                                                  GiveUpInDoubt(row["message_id"], send_again=True))
            except ActorError as err:
                log.warning("broadcast %s: recipient %s in flight not given up yet (%s)", self.id, row["position"],
                            err)
                continue
            if isinstance(recorded, Recorded) and recorded.id is not None:
                again += 1
                del self._in_flight_since[row["position"]]
        if again:
            log.warning("broadcast %s: %d recipients whose messages were left in flight by a node that stopped (no "
                        "status came in %g s) are sent again", self.id, again, after)
        return again > 0

    async def _send_one(self, recipient: Record, slots: trio.Semaphore) -> None:
        try:
            await self._deliver(recipient)
        except DatabaseUnavailable as err:
            # Its state is whatever was committed: still queued (tried again next round), or claimed.
            log.warning("broadcast %s: recipient %s left as it stood (%s)", self.id, recipient["position"], err)
        finally:
            slots.release()

    async def _deliver(self, recipient: Record) -> None:
        row, deps = self.row, self.deps
        position = recipient["position"]
        parameters = recipient["parameters"] if recipient["parameters"] is not None else row["parameters"]
        request = SendRequest(to=recipient["phone"], type="template", template_name=row["template_name"],
                              template_language=row["template_language"], template_parameters=tuple(parameters))
        order = Send(request=request, sender_type="system", author=f"broadcast:{self.id}",
                     sender_label=row["name"], broadcast=BroadcastRecipient(self.id, position))
        try:
            outcome = await ask_conversation(self.actors, row["workspace_id"], recipient["phone"], order)
        except ActorError as err:
            log.warning("broadcast %s: recipient %s not reached (%s); trying again later", self.id, position, err)
            await queries.retry_later(deps.db, self.id, position, at=deps.clock.now() + UNREACHABLE_CHAT_DELAY,
                                      error_code=None, error_text=None, claimed=False)
            return
        assert isinstance(outcome, SendOutcome)
        await self._judge(recipient, outcome)

    async def _judge(self, recipient: Record, outcome: SendOutcome) -> None:
        deps, position = self.deps, recipient["position"]
        if outcome.accepted or outcome.in_doubt:
            return  # an in-doubt recipient is claimed, its message pending: settled like any send in doubt
        if outcome.failure is not None:
            attempts = recipient["attempts"] + 1
            if outcome.failure.code == THROUGHPUT and attempts < MAX_ATTEMPTS:
                await queries.retry_later(deps.db, self.id, position,
                                          at=deps.clock.now() + RETRY_DELAYS[min(attempts, len(RETRY_DELAYS)) - 1],
                                          error_code=outcome.failure.code,
                                          error_text=outcome.failure.details or outcome.failure.message, claimed=True)
            return  # otherwise final: the failed message carries the error
        status = outcome.refused_status
        if status == 402:
            self._moved(await queries.change_status(deps.db, self.id, among=(SENDING,), to=PAUSED,
                                                    paused_reason=INSUFFICIENT_CREDITS))
        elif status == 403:
            await queries.settle_recipient(deps.db, self.id, position, state=queries.SKIPPED, skip_reason="opted_out")
        elif status == 409:
            return  # not queued any more: sent already, or cancelled
        else:
            await queries.settle_recipient(deps.db, self.id, position, state=queries.FAILED,
                                           error_text=outcome.refused_sentence)


def _words(status: str) -> str:
    return status.replace("_", " ")


def _either(statuses: tuple[str, ...]) -> str:
    words = [_words(status) for status in statuses]
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


_PAST = {"approve": "approved", "reject": "rejected", "cancel": "cancelled", "pause": "paused",
         "resume": "resumed"}


def broadcast_kind(deps: BroadcastDeps, *, idle_timeout: float = 300.0) -> ActorKind:
    # The pump is a task of the actor: a sending broadcast stays in memory; a finished one passivates.
    return ActorKind(name=KIND, factory=lambda key: Broadcast(key, deps), mailbox_capacity=64,
                     idle_timeout=idle_timeout, ask_timeout=30.0, workspace_of=workspace_in_key)


def broadcast_key(workspace_id: int, broadcast_id: int) -> str:
    return f"{workspace_id}:{broadcast_id}"
