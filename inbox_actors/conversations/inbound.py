"""The platform's deliveries into the inbox: one call takes a verified envelope's batches and returns whether
everything they carried is committed.

Customer messages go to their chats' actors first (one customer's in the order they came, different customers in
parallel); then the statuses go to each workspace's status writer, which records most of them in bulk and hands
the rest to their chats' actors. A delivery is acknowledged only when all of it is committed, so the platform
retries anything else; retries are harmless because a message id is stored once and a late status never moves a
message backwards. Items for a number no workspace owns are dropped (retrying would not help).
"""

from __future__ import annotations

import contextlib
import logging
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial

import trio

from inbox_actors.conversations import conversation
from inbox_actors.conversations.status_writer import write_statuses
from inbox_actors.domain.phones import platform_phone
from inbox_actors.platform.link import PlatformLink
from inbox_actors.platform.payloads import StatusUpdate
from inbox_actors.platform.webhook_envelope import InboundBatch
from inbox_actors.runtime import ActorError
from inbox_actors.runtime.actor import Directory
from persistence.database import Database, DatabaseUnavailable

log = logging.getLogger("inbox_actors.conversations.inbound")

# How many customers' items one delivery works on at once. A chat's items wait in its actor's mailbox (behind
# the bot's send, say), not on a connection, so this is set well above the database pool: at 16 a delivery
# of 100 statuses took longer than the platform waits (measured with scripts/load_chats.py).
PARALLEL_CHATS = 64
_UNLIMITED = contextlib.nullcontext()


@dataclass
class Delivery:
    """What became of one envelope: `failures` names what is not committed (empty: all of it is)."""

    messages: int = 0
    statuses: int = 0
    failures: list[str] = field(default_factory=list)

    @property
    def stored(self) -> bool:
        return not self.failures


async def deliver(db: Database, actors: Directory, link: PlatformLink, batches: Sequence[InboundBatch]) -> Delivery:
    delivery = Delivery(messages=sum(len(batch.messages) for batch in batches),
                        statuses=sum(len(batch.statuses) for batch in batches))
    chats: dict[tuple[int, str], list[object]] = defaultdict(list)
    statuses: dict[int, list[StatusUpdate]] = defaultdict(list)
    for batch in batches:
        workspace_id = await link.workspace_of(db, batch.phone_number_id)
        if workspace_id is None:
            log.warning("webhook for unknown phone_number_id %s dropped", batch.phone_number_id)
            continue
        for message in batch.messages:
            _add(chats, workspace_id, message.from_phone, conversation.CustomerWrote(message))
        statuses[workspace_id].extend(batch.statuses)
    # Customer messages first, then statuses: a status judged after a message the same envelope carried sees it.
    await _to_chats(actors, chats, delivery.failures)
    chats.clear()
    for workspace_id, updates in statuses.items():
        # Most statuses are written in bulk for the whole workspace; those a chat must judge go to its actor
        # (status_writer.py), which finds the chat's row whatever spelling of the number the platform reports.
        try:
            written = await write_statuses(actors, workspace_id, updates)
        except (ActorError, DatabaseUnavailable) as err:
            log.warning("webhook statuses for workspace %s not stored: %s", workspace_id, err)
            delivery.failures.append(f"statuses: {type(err).__name__}")
            continue
        for phone, update in written.for_chats:
            _add(chats, workspace_id, phone, conversation.StatusReported(update))
    await _to_chats(actors, chats, delivery.failures)
    return delivery


def _add(work: dict, workspace_id: int, raw_phone: str, item: object) -> None:
    phone = platform_phone(raw_phone)
    if phone is None:
        log.warning("webhook item for unusable phone %r dropped", raw_phone)
        return
    work[(workspace_id, phone)].append(item)


async def _to_chats(actors: Directory, chats: dict[tuple[int, str], list[object]], failures: list[str]) -> None:
    """Each chat's items to its actor in order, up to PARALLEL_CHATS chats at once."""
    if not chats:
        return
    if len(chats) == 1:   # most deliveries: one customer's message, handled without a nursery and a task for it
        [((workspace_id, phone), items)] = chats.items()
        await _to_chat(actors, workspace_id, phone, items, _UNLIMITED, failures)
        return
    limiter = trio.CapacityLimiter(PARALLEL_CHATS)
    async with trio.open_nursery() as nursery:
        for (workspace_id, phone), items in chats.items():
            nursery.start_soon(partial(_to_chat, actors, workspace_id, phone, items, limiter, failures))


async def _to_chat(actors: Directory, workspace_id: int, phone: str, items: list[object],
                   limiter: trio.CapacityLimiter | contextlib.nullcontext, failures: list[str]) -> None:
    async with limiter:
        for item in items:
            try:
                await conversation.ask_conversation(actors, workspace_id, phone, item)
            except (ActorError, DatabaseUnavailable) as err:
                log.warning("webhook item for %s:%s not stored: %s", workspace_id, phone, err)
                failures.append(f"{phone}: {type(err).__name__}")
                return  # later items of this chat wait for the retry, so their order holds
