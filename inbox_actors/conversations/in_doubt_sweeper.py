"""The in-doubt sweep: a timer job that gives up the sends a crash left pending and no status settled.

A send is committed as a pending message before the platform is called (send_records.py). A crash between the
platform's answer and the commit of its outcome leaves it pending; the message's status webhook, which carries
its id as callback data, normally settles it within seconds of the restart. One still pending
IN_DOUBT_LIFETIME after it was committed (the platform never got it, or every status of it was lost) is given
up: every round (10 minutes) the job reads the oldest such messages from PostgreSQL, aged by PostgreSQL's clock (a
node-wide sweep: no node's own clock decides for the workspaces), and asks each one's chat,
its single writer, to record it as failed (`GiveUpInDoubt`). Nothing is ever sent again. It keeps nothing in
memory, so a restart loses nothing; as a timer (runtime/timer.py) a failing round shows in `/health/actors`
and is retried after a backoff.
"""

from __future__ import annotations

import logging

from inbox_actors.conversations.conversation import GiveUpInDoubt, ask_conversation
from inbox_actors.conversations.send_records import IN_DOUBT_LIFETIME
from inbox_actors.runtime import ActorError, Directory, Job, ServedElsewhere
from persistence.database import Database
from persistence.queries import messages as message_queries

log = logging.getLogger("inbox_actors.conversations.in_doubt_sweeper")

EVERY = 600.0
BATCH = 200


def in_doubt_job(db: Database, every: float = EVERY) -> Job:
    return Job(every, lambda actors: give_up_in_doubt(actors, db))


async def give_up_in_doubt(actors: Directory, db: Database) -> int:
    """Give up every send pending for longer than IN_DOUBT_LIFETIME; how many chats recorded one."""
    given_up = 0
    while True:
        rows = await message_queries.in_doubt_for(db, IN_DOUBT_LIFETIME, BATCH)
        done = 0
        for row in rows:
            try:
                await ask_conversation(actors, row["workspace_id"], row["phone"], GiveUpInDoubt(row["id"]))
            except ServedElsewhere:
                continue      # the node holding the workspace gives it up
            except ActorError as err:
                # The chat is failing; the message stays pending and a later round tries again.
                log.warning("send %s of %s:%s not given up yet: %s", row["id"], row["workspace_id"],
                            row["phone"], err)
                continue
            done += 1
        given_up += done
        if len(rows) < BATCH or not done:
            return given_up
