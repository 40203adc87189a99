"""A workspace this node has just taken (leases.py's `on_taken`): the bot turns its former node may have left
mid-way go on here.

A chat's bot thinks beside its actor and commits nothing until it answers, so a node that lost the workspace (it
died, stopped, or handed it over while rebalancing) loses the turns under way with its actors. A chat asks its bot
again whenever it is activated with its customer's last word unanswered (Conversation.on_start), but nothing
activates it here until the customer writes again, and a customer waiting for the answer does not: the chat would
stay silent. So the node that takes the workspace wakes each chat that may be owed a turn (`Wake`); one that was
answered meanwhile, or whose word is stale, does nothing on waking.
"""

from __future__ import annotations

import logging

from inbox_actors.conversations.conversation import KIND, UNANSWERED_WORD_SECONDS, Wake, conversation_key
from inbox_actors.runtime import ActorError, Directory, MailboxFull
from persistence.database import Database, DatabaseUnavailable
from persistence.queries import conversations as queries

log = logging.getLogger("inbox_actors.conversations.turn_resumption")

# Chats woken at one takeover at most: far more than a workspace's bot turns under way at any moment (the model
# gate's concurrency, INBOX_MODEL_CONCURRENCY), newest first.
MAX_WOKEN = 1_000


async def wake_unanswered_chats(db: Database, actors: Directory, workspace_id: int) -> int:
    """Wake the workspace's chats that may be owed a bot turn; how many were woken."""
    try:
        phones = await queries.chats_the_bot_may_owe(db, workspace_id, UNANSWERED_WORD_SECONDS, MAX_WOKEN)
    except DatabaseUnavailable as err:
        log.warning("workspace %d taken: chats owed a bot turn not looked for: %s", workspace_id, err)
        return 0
    woken = 0
    for phone in phones:
        try:
            actors.ref(KIND, conversation_key(workspace_id, phone)).tell_nowait(Wake())
            woken += 1
        except (MailboxFull, ActorError):
            pass         # busy, so active already (it asked on activation), or served by another node after all
    if woken:
        log.info("workspace %d taken: %d chats woken to go on with their bot turns", workspace_id, woken)
    return woken
