"""The send pacer: one actor per business number, holding its send schedule (see domain/send_pacing.py).

Every send through the platform asks it first and waits the answer's seconds, so bursts (a busy bot, many
agents, API sends) are spread under the platform's throughput limit instead of being refused with 130429.
When the number is saturated for longer than MAX_WAIT, the send is refused at once like the platform would.
Broadcasts ask for bulk slots (`bulk`), which never get ahead of one-to-one sends (domain/send_pacing.py); they
wait as long as that takes. The pacer passivates once idle; an empty schedule loses nothing.
"""

from __future__ import annotations

import msgspec
import trio

from inbox_actors.domain.send_pacing import SendSchedule
from inbox_actors.runtime import Actor, ActorKind, Directory, workspace_in_key

KIND = "send_pacer"
DEFAULT_PER_SECOND = 80
# A send may wait this long for its slot; beyond it, the caller fails fast (130429) rather than pile up.
MAX_WAIT = 5.0
# A send that wakes this much after its slot asks for another one (see wait_for_slot).
LATE_TOLERANCE = 0.05
LATE_RETRIES = 2


class ReserveSlot(msgspec.Struct, frozen=True):
    per_second: int
    bulk: bool = False


class SendPacer(Actor):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self._schedule: SendSchedule | None = None

    async def receive(self, message: object) -> float | None:
        if not isinstance(message, ReserveSlot):
            raise TypeError(f"send pacer cannot handle {type(message).__name__}")
        if self._schedule is None or self._schedule.limit != message.per_second:
            self._schedule = SendSchedule(message.per_second)
        if message.bulk:
            return self._schedule.reserve_bulk(trio.current_time())
        return self._schedule.reserve(trio.current_time(), MAX_WAIT)


def send_pacer_kind() -> ActorKind:
    # Its receive never awaits: an ask finding it idle is answered in the sender's task (ActorKind.inline_asks).
    return ActorKind(name=KIND, factory=SendPacer, mailbox_capacity=1024, idle_timeout=60.0, ask_timeout=5.0,
                     inline_asks=True, workspace_of=workspace_in_key)


def pacer_key(workspace_id: int, phone_number_id: str) -> str:
    """A number belongs to one workspace; its pacer runs on the node holding that workspace."""
    return f"{workspace_id}:{phone_number_id}"


async def wait_for_slot(actors: Directory, workspace_id: int, phone_number_id: str, per_second: int) -> bool:
    """Wait until this number may send; False (at once) when it is saturated beyond MAX_WAIT.

    A send that wakes well after its slot (the process was busy) would leave together with the others that woke
    late, closer than the schedule spaced them: it asks for a slot again, up to LATE_RETRIES times."""
    pacer = actors.ref(KIND, pacer_key(workspace_id, phone_number_id))
    for _ in range(1 + LATE_RETRIES):
        due = trio.current_time()
        delay = await pacer.ask(ReserveSlot(per_second))
        if delay is None:
            return False
        due += delay
        if delay > 0:
            await trio.sleep(delay)
        if trio.current_time() - due <= LATE_TOLERANCE:
            return True
    return True


async def wait_for_bulk_slot(actors: Directory, workspace_id: int, phone_number_id: str, per_second: int) -> None:
    """Wait until a bulk send may go from this number (however long one-to-one sends keep it busy)."""
    pacer = actors.ref(KIND, pacer_key(workspace_id, phone_number_id))
    while (delay := await pacer.ask(ReserveSlot(per_second, bulk=True))) > 0:
        await trio.sleep(delay)
