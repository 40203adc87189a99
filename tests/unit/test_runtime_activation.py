"""Activation on demand: the first message to a key starts its actor, after on_start and only once."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from inbox_actors.runtime import ActivationFailed, ActorSystem, AskTimeout

from .runtime_harness import Add, Echo, Probe, running


async def test_ref_alone_activates_nothing(autojump_clock):
    probe = Probe()
    async with running(probe.kind()) as system:
        system.ref("probe", "k")
        await trio.testing.wait_all_tasks_blocked()
        assert probe.instances == 0
        assert system.statistics("probe", "k") is None


def test_ref_with_unknown_kind_raises_key_error():
    system = ActorSystem([Probe().kind("known")])
    with pytest.raises(KeyError, match="unknown"):
        system.ref("unknown", "k")


async def test_first_message_activates_and_is_handled_after_on_start(autojump_clock):
    probe = Probe()
    probe.store["k"] = 41
    async with running(probe.kind()) as system:
        assert await system.ref("probe", "k").ask(Add(1)) == 42, "state loaded by on_start before handling"
        assert probe.journal[0] == ("start", "k")
        assert system.statistics("probe", "k").status == "running"


async def test_concurrent_senders_share_one_activation_and_wait_for_on_start(autojump_clock):
    probe = Probe()
    probe.start_gate = trio.Event()
    async with running(probe.kind()) as system:
        replies = []

        async def ask(value):
            replies.append(await system.ref("probe", "k").ask(Echo(value)))

        async with trio.open_nursery() as nursery:
            for value in ("a", "b", "c"):
                nursery.start_soon(ask, value)
            await trio.testing.wait_all_tasks_blocked()
            assert probe.instances == 1
            assert system.statistics("probe", "k").status == "starting"
            assert system.statistics("probe", "k").mailbox_used == 3
            assert probe.events("handled") == [], "no message may be handled before on_start finished"
            probe.start_gate.set()
        assert sorted(replies) == ["a", "b", "c"]
        assert probe.events("start") == [("start", "k")]


async def test_failed_first_on_start_fails_every_queued_ask_and_the_activating_tell(autojump_clock):
    probe = Probe()
    probe.start_failures = 1
    probe.start_gate = trio.Event()
    async with running(probe.kind()) as system:
        ref = system.ref("probe", "k")
        outcomes: dict[str, BaseException] = {}

        async def tell():
            try:
                await ref.tell(Echo("activating"))
            except ActivationFailed as exc:
                outcomes["tell"] = exc

        async def ask(name):
            try:
                await ref.ask(Echo(name))
            except ActivationFailed as exc:
                outcomes[name] = exc

        async with trio.open_nursery() as nursery:
            nursery.start_soon(tell)
            await trio.testing.wait_all_tasks_blocked()
            nursery.start_soon(ask, "queued-1")
            nursery.start_soon(ask, "queued-2")
            await trio.testing.wait_all_tasks_blocked()
            probe.start_gate.set()

        assert set(outcomes) == {"tell", "queued-1", "queued-2"}
        for exc in outcomes.values():
            assert isinstance(exc.__cause__, ConnectionError)
            assert (exc.kind, exc.key) == ("probe", "k")
        assert system.statistics("probe", "k") is None, "a cell that never started leaves the registry"
        assert probe.events("handled") == []

        # The system survived, and the next send tries a fresh activation.
        assert await ref.ask(Echo("retry")) == "retry"
        assert system.summary().accepting


async def test_askers_deadline_does_not_cancel_an_activation_others_wait_for(autojump_clock):
    probe = Probe()
    probe.start_gate = trio.Event()
    async with running(probe.kind()) as system:
        ref = system.ref("probe", "k")
        patient = []

        async def ask_patiently():
            patient.append(await ref.ask(Echo("patient"), timeout=60))

        async def open_database_later():
            await trio.sleep(10)
            probe.start_gate.set()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(open_database_later)
            with pytest.raises(AskTimeout):
                await ref.ask(Echo("impatient"), timeout=1)
            nursery.start_soon(ask_patiently)
        assert patient == ["patient"]
        assert [e[2] for e in probe.events("handled")] == ["patient"]
