"""A database outage under load: chats crash and restart with backoff, and once PostgreSQL is back no chat refuses
work. Without backoff the restart intensity was spent in milliseconds and every active chat answered ActorFailed
for 30 s after a one-second outage; with backoff but counted as the actors' own crashes, an outage of four seconds
still spent it, and the conversation kind's circuit refused every chat for 30 s. Told the database's outages
(`actor_kinds.OUTAGES`), the runtime spends nothing on them, and every chat answers within a second or so of the
return."""

from __future__ import annotations

from urllib.parse import urlsplit

import trio

from inbox_actors.actor_kinds import OUTAGES
from inbox_actors.conversations.conversation import ConversationDeps, ask_conversation, conversation_kind
from inbox_actors.conversations.send_pacer import send_pacer_kind
from inbox_actors.runtime import ActorError, ActorFailed, ActorSystem
from inbox_actors.runtime.clock import WallClock
from tests import builders
from tests.conftest import admin_execute
from tests.integration.chat_helpers import customer_writes
from tests.integration.test_conversation_actor import RecordingPlatform

CHATS = 20


async def test_no_chat_refuses_work_after_a_one_second_outage(db, database_url, postgres_server):
    name = urlsplit(database_url).path.lstrip("/")
    deps = ConversationDeps(db=db, clock=WallClock(), platform=RecordingPlatform(), responder=None)
    system = ActorSystem([conversation_kind(deps), send_pacer_kind()])
    workspace_id = await builders.workspace(db)
    phones = [f"9198000{n:05d}" for n in range(CHATS)]
    async with trio.open_nursery() as nursery:
        await nursery.start(system.run)
        for phone in phones:
            await ask_conversation(system, workspace_id, phone, customer_writes(phone))

        await admin_execute(postgres_server, f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false',
                            f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}'")
        outage_began = trio.current_time()
        refused_during: list[ActorError] = []

        async def write_during_the_outage(phone: str) -> None:
            # Load while the database is gone (a write every 50 ms per chat, paced on purpose): each chat crashes
            # on it and restarts with backoff.
            while trio.current_time() - outage_began < 1.0:
                try:
                    await ask_conversation(system, workspace_id, phone, customer_writes(phone))
                except ActorError as err:
                    refused_during.append(err)
                await trio.sleep(0.05)

        async def end_the_outage() -> None:
            await trio.sleep(1.0)  # the outage lasts a second: that is what this test is about
            await admin_execute(postgres_server, f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')

        async with trio.open_nursery() as load:
            load.start_soon(end_the_outage)
            for phone in phones:
                load.start_soon(write_during_the_outage, phone)

        assert refused_during, "the outage was felt"
        assert not any(isinstance(err, ActorFailed) for err in refused_during), "no chat escalated"
        answers: dict[str, object] = {}

        async def write_after(phone: str) -> None:
            answers[phone] = await ask_conversation(system, workspace_id, phone, customer_writes(phone))

        async with trio.open_nursery() as after:
            for phone in phones:
                after.start_soon(write_after, phone)
        assert len(answers) == CHATS, "every chat took work once the database was back"
        await system.shutdown(2)


async def test_every_chat_answers_within_two_seconds_of_the_end_of_a_four_second_outage(db, database_url,
                                                                                         postgres_server):
    name = urlsplit(database_url).path.lstrip("/")
    deps = ConversationDeps(db=db, clock=WallClock(), platform=RecordingPlatform(), responder=None)
    system = ActorSystem([conversation_kind(deps), send_pacer_kind()], outages=OUTAGES)
    workspace_id = await builders.workspace(db)
    phones = [f"9198100{n:05d}" for n in range(CHATS)]
    async with trio.open_nursery() as nursery:
        await nursery.start(system.run)
        for phone in phones:
            await ask_conversation(system, workspace_id, phone, customer_writes(phone))
        await admin_execute(postgres_server, f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false',
                            f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}'")
        try:
            async with trio.open_nursery() as outage:
                for phone in phones:   # each chat crashes on it, then keeps trying to start for four seconds
                    outage.start_soon(_refused, system, workspace_id, phone)
            await trio.sleep(4.0)
        finally:
            await admin_execute(postgres_server, f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')
        back = trio.current_time()
        counts = system.summary().kinds["conversation"]
        assert counts.failed_total == 0 and not counts.circuit_open, counts
        answered: dict[str, float] = {}

        async def write_after(phone: str) -> None:
            await ask_conversation(system, workspace_id, phone, customer_writes(phone))
            answered[phone] = trio.current_time() - back

        async with trio.open_nursery() as after:
            for phone in phones:
                after.start_soon(write_after, phone)
        assert len(answered) == CHATS and max(answered.values()) <= 2.0, answered
        await system.shutdown(2)


async def _refused(system: ActorSystem, workspace_id: int, phone: str) -> None:
    try:
        await ask_conversation(system, workspace_id, phone, customer_writes(phone))
    except ActorError:
        return
    raise AssertionError(f"{phone}: a write was stored while the database was out")
