"""The activity log keeps its records through a database outage instead of crashing and dropping its queue.

The outage is simulated at the query function (no database in unit tests); the real writes are covered by
tests/e2e/test_activity_log.py.
"""

from datetime import datetime, timezone

import trio

from inbox_actors.access import activity_log
from inbox_actors.access.activity_log import CallRecord, activity_log_kind, record_call, wait_recorded
from inbox_actors.runtime import ActorKind, ActorSystem
from persistence.database import DatabaseUnavailable


def record(n: int) -> CallRecord:
    return CallRecord(key_id=1, workspace_id=1, method="GET", path=f"/{n}", status=200, ip="127.0.0.1",
                      at=datetime.now(timezone.utc))


async def test_records_survive_an_outage_in_order(autojump_clock, nursery, monkeypatch):
    written: list[str] = []
    outage = {"failures_left": 3}

    async def record_activity(db, rows):
        if outage["failures_left"]:
            outage["failures_left"] -= 1
            raise DatabaseUnavailable("connection refused")
        written.extend(row[4] for row in rows)  # (key_id, workspace_id, key_hash, method, path, ...)

    monkeypatch.setattr(activity_log.key_queries, "record_activity", record_activity)
    system = ActorSystem([activity_log_kind(db=None)])
    await nursery.start(system.run)
    for n in range(5):
        assert await record_call(system, record(n))
    await wait_recorded(system)
    assert written == ["/0", "/1", "/2", "/3", "/4"]
    stats = system.statistics(activity_log.KIND, activity_log.SINGLE_KEY)
    assert stats.restarts == 0 and stats.messages_dropped == 0
    await system.shutdown()


async def test_a_full_log_drops_a_record_after_a_short_wait_rather_than_stall_requests(autojump_clock, nursery,
                                                                                        monkeypatch):
    writing = trio.Event()

    async def never(db, rows):
        writing.set()
        raise DatabaseUnavailable("down for good")

    monkeypatch.setattr(activity_log.key_queries, "record_activity", never)
    small = ActorKind(name=activity_log.KIND, factory=lambda key: activity_log.ActivityLog(key, None),
                      mailbox_capacity=2, batch_limit=10)
    system = ActorSystem([small])
    await nursery.start(system.run)
    # The first record must be in the (failing) write before the mailbox fills, or the actor could take
    # two records as one batch and leave room for a fourth.
    assert await record_call(system, record(0))
    await writing.wait()
    assert [await record_call(system, record(n)) for n in (1, 2)] == [True, True]
    started = trio.current_time()
    assert await record_call(system, record(3)) is False
    assert trio.current_time() - started == activity_log.ENQUEUE_PATIENCE
    await system.shutdown(1)
