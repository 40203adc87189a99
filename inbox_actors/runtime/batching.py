"""Group commit: a kind with batch_limit > 1 takes, with the first message, whatever is queued behind it or
arrives within its linger, so one receive_batch (one transaction) serves them all."""

from __future__ import annotations

import trio

from .actor import ActorKind
from .envelope import Envelope
from .mailbox import Mailbox


def take(envelope: Envelope, batch: list[Envelope]) -> bool:
    """Add the envelope to the batch unless its asker already gave up; False when it was skipped."""
    if envelope.begin():
        batch.append(envelope)
        return True
    return False


async def claim_batch(mailbox: Mailbox, kind: ActorKind, first: Envelope, batch: list[Envelope]) -> int:
    """Fill `batch` (in flight from the first claim on) with `first` and what follows it, up to the kind's
    batch_limit and linger; how many envelopes were skipped because their askers had given up."""
    skipped = 0 if take(first, batch) else 1
    with trio.move_on_after(kind.batch_linger):
        while len(batch) < kind.batch_limit:
            envelope = mailbox.take()
            if envelope is None:
                if kind.batch_linger == 0 or mailbox.closed:
                    break
                await mailbox.wait_for_arrival()
                continue
            skipped += 0 if take(envelope, batch) else 1
    return skipped
