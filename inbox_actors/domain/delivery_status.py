"""Delivery statuses of outbound messages, and the rule that keeps them moving forwards.

The platform retries and reorders status webhooks: "delivered" may arrive after "read", the same status
twice. A message's current status only ever advances (sent -> delivered -> read); "failed" replaces only
"sent" (a message already delivered did reach the phone). Every receipt is still kept with its own
timestamp, so the receipts list is complete whatever order the webhooks came in.

An outbound message is "pending" from the moment it is committed, before the platform is called, until its
outcome is recorded: sent (with the platform's id) or failed. A pending message is no reply and has no
response time; only the outcome (or a status webhook carrying its id, after a crash) settles it.
"""

from __future__ import annotations

PENDING = "pending"
SENT = "sent"
DELIVERED = "delivered"
READ = "read"
FAILED = "failed"
# Customer messages carry this status: they are not deliveries of ours.
RECEIVED = "received"

STATUSES = (SENT, DELIVERED, READ, FAILED)
_RANK = {SENT: 1, DELIVERED: 2, READ: 3}


def advances(current: str, reported: str) -> bool:
    """Whether a reported status replaces the current one."""
    if reported == FAILED:
        return current == SENT
    if current == FAILED or reported not in _RANK:
        return False
    return _RANK[reported] > _RANK.get(current, 0)


def reached_phone(status: str) -> bool:
    """Delivered or read: the reply counts as a reply (a failed or merely sent one does not)."""
    return status in (DELIVERED, READ)
