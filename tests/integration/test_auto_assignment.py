"""Automatic assignment on real actors and PostgreSQL: the workspace's desk gives each chat the bot hands over to an
online member with room, exactly once, never past the capacity, in the chosen order, within its team; the rest wait
and are given the moment someone has room."""

from __future__ import annotations

from collections import Counter

import pytest
import trio

from inbox_actors.contacts.contact_card import contact_card_kind
from inbox_actors.conversations import conversation
from inbox_actors.conversations.bot import BotQuestion, HandOff
from inbox_actors.conversations.conversation import ConversationDeps, conversation_kind
from inbox_actors.conversations.send_pacer import send_pacer_kind
from inbox_actors.runtime import ActorSystem
from inbox_actors.runtime.clock import WallClock
from inbox_actors.team import presence
from inbox_actors.team.assignment_desk import AssignmentDeskDeps, assignment_desk_kind, look
from inbox_actors.use_cases import (
    auto_assignment,
    availability,
    chat_organising,
    chats,
    teams,
)
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.outcomes import Done, Refused
from tests import builders
from tests.integration.chat_helpers import customer_writes
from tests.integration.test_conversation_actor import RecordingPlatform
from tests.integration.use_case_harness import UseCases
from tests.waiting import eventually


class HandsEveryChatOver:
    """The bot of these tests: it has an answer for nothing, so every customer is handed to the team."""

    async def respond(self, question: BotQuestion, actors) -> HandOff:
        return HandOff("bot_has_no_answer")


@pytest.fixture
async def desk(db, nursery):
    clock = WallClock()
    platform = RecordingPlatform()
    chats_deps = ConversationDeps(db=db, clock=clock, platform=platform, responder=HandsEveryChatOver(),
                                  on_queue_moved=look)
    system = ActorSystem([conversation_kind(chats_deps), send_pacer_kind(), contact_card_kind(db, clock),
                          assignment_desk_kind(AssignmentDeskDeps(db=db))])
    await nursery.start(system.run)
    deps = UseCaseDeps(db, system, clock, webhook_guard=None, webhook_transport=None)  # type: ignore[arg-type]
    yield UseCases(db, deps, platform, await builders.workspace(db))
    await system.shutdown(2)


async def online_agents(use_cases: UseCases, count: int) -> list:
    agents = [await use_cases.member(permissions=["inbox"]) for _ in range(count)]
    for agent in agents:
        await presence.choose(use_cases.db, use_cases.workspace_id, agent.member_id, "online")
    return agents


async def turn_on(use_cases: UseCases, mode: str, capacity: int) -> None:
    admin = await use_cases.member(role="admin", permissions=["all"])
    outcome = await use_cases.run(admin, auto_assignment.SAVE_SETTINGS, {"mode": mode, "capacity": capacity})
    assert isinstance(outcome, Done) and outcome.data.mode == mode


async def hand_over(use_cases: UseCases, phones: list[str]) -> None:
    async with trio.open_nursery() as nursery:
        for phone in phones:
            nursery.start_soon(conversation.ask_conversation, use_cases.deps.actors, use_cases.workspace_id, phone,
                               customer_writes(phone, "I need a person"))


async def holders(db, workspace_id: int) -> dict[str, int | None]:
    rows = await db.fetch("SELECT phone, assigned_to FROM conversations WHERE workspace_id = $1", workspace_id)
    return {row["phone"]: row["assigned_to"] for row in rows}


async def automatic_events(db, workspace_id: int) -> list:
    return await db.fetch(
        "SELECT c.phone, e.to_member, e.by_member FROM assignment_events e JOIN conversations c"
        " ON c.id = e.conversation_id WHERE c.workspace_id = $1 AND e.reason = 'auto_assigned' ORDER BY e.id",
        workspace_id)


def phones(count: int, start: int = 0) -> list[str]:
    return [f"9198000{n:05d}" for n in range(start, start + count)]


async def test_a_burst_of_hand_overs_fills_every_member_to_capacity_once_and_queues_the_rest(desk):
    agents = await online_agents(desk, 5)
    await turn_on(desk, "round_robin", 10)
    await hand_over(desk, phones(60))

    async def settled():
        held = await holders(desk.db, desk.workspace_id)
        return held if len(held) == 60 and sum(m is not None for m in held.values()) == 50 else None
    held = await eventually(settled, timeout=20)
    assert Counter(m for m in held.values() if m is not None) == {a.member_id: 10 for a in agents}
    events = await automatic_events(desk.db, desk.workspace_id)
    assert len(events) == 50 and len({e["phone"] for e in events}) == 50      # each chat given once
    assert all(e["by_member"] is None for e in events)                     # by the system
    queue = await desk.db.fetchval("SELECT count(*) FROM conversations WHERE workspace_id = $1"
                                   " AND state = 'HANDOFF_PENDING' AND assigned_to IS NULL", desk.workspace_id)
    assert queue == 10

    # Room frees: the chats resolved are replaced from the queue at once, with the member who has room.
    first = agents[0]
    theirs = [phone for phone, m in held.items() if m == first.member_id][:3]
    for phone in theirs:
        assert isinstance(await desk.run(first, chats.RESOLVE, {"phone": phone}), Done)

    async def refilled():
        now = await holders(desk.db, desk.workspace_id)
        return now if Counter(now.values())[first.member_id] == 10 else None
    now = await eventually(refilled, timeout=3)
    assert Counter(m for m in now.values() if m is not None) == {a.member_id: 10 for a in agents}
    assert len(await automatic_events(desk.db, desk.workspace_id)) == 53


async def test_round_robin_takes_turns_and_least_busy_goes_to_whoever_holds_least(desk):
    agents = await online_agents(desk, 3)
    await turn_on(desk, "round_robin", 10)
    for phone in phones(6):
        await hand_over(desk, [phone])
        await eventually(lambda p=phone: _held(desk, p))
    given = [e["to_member"] for e in await automatic_events(desk.db, desk.workspace_id)]
    ids = [a.member_id for a in agents]
    assert given == ids + ids

    # Least busy: the second agent resolves both of theirs, so the next chat is theirs.
    await turn_on(desk, "least_busy", 10)
    held = await holders(desk.db, desk.workspace_id)
    for phone in [p for p, m in held.items() if m == agents[1].member_id]:
        await desk.run(agents[1], chats.RESOLVE, {"phone": phone})
    await hand_over(desk, phones(1, start=100))
    assert await eventually(lambda: _held(desk, phones(1, start=100)[0])) == agents[1].member_id


async def _held(use_cases: UseCases, phone: str) -> int | None:
    return (await holders(use_cases.db, use_cases.workspace_id)).get(phone)


async def test_a_member_busy_or_offline_gets_nothing_and_a_chat_waits_until_someone_is_online(desk):
    [agent] = await online_agents(desk, 1)
    await presence.choose(desk.db, desk.workspace_id, agent.member_id, "busy")
    await turn_on(desk, "least_busy", 5)
    await hand_over(desk, phones(2))
    await trio.sleep(1.5)
    assert set((await holders(desk.db, desk.workspace_id)).values()) == {None}
    outcome = await desk.run(agent, availability.CHOOSE, {"status": "online"})
    assert isinstance(outcome, Done)

    async def both_given():
        held = await holders(desk.db, desk.workspace_id)
        return set(held.values()) == {agent.member_id}
    await eventually(both_given, timeout=2)


async def test_a_chat_routed_to_a_team_goes_only_to_its_members(desk):
    outsider, insider = await online_agents(desk, 2)
    admin = await desk.member(role="admin", permissions=["all"])
    team = await desk.run(admin, teams.CREATE, {"name": "Billing"})
    assert isinstance(team, Done)
    await desk.run(admin, teams.ADD_MEMBER, {"team_id": team.data.id, "member_id": insider.member_id})
    # Before anything is switched on, the chat the bot answers is routed to Billing; its hand-over lands there.
    [phone] = phones(1)
    await conversation.ask_conversation(desk.deps.actors, desk.workspace_id, phone, customer_writes(phone))
    await eventually(lambda: _state(desk, phone, "HANDOFF_PENDING"))
    routed = await desk.run(admin, chat_organising.ROUTE_TO_TEAM, {"phone": phone, "team_id": team.data.id})
    assert isinstance(routed, Done) and routed.data.team.name == "Billing"
    await turn_on(desk, "least_busy", 10)
    assert await eventually(lambda: _held(desk, phone)) == insider.member_id
    assert outsider.member_id not in (await holders(desk.db, desk.workspace_id)).values()


async def _state(use_cases: UseCases, phone: str, state: str) -> bool:
    return await use_cases.db.fetchval("SELECT state FROM conversations WHERE workspace_id = $1 AND phone = $2",
                                       use_cases.workspace_id, phone) == state


async def test_routing_a_held_chat_to_a_team_releases_it_there_and_a_team_not_of_the_workspace_is_refused(desk):
    [agent] = await online_agents(desk, 1)
    admin = await desk.member(role="admin", permissions=["all"])
    [phone] = phones(1)
    await hand_over(desk, [phone])
    await eventually(lambda: _state(desk, phone, "HANDOFF_PENDING"))
    assert isinstance(await desk.run(agent, chats.CLAIM, {"phone": phone}), Done)
    team = await desk.run(admin, teams.CREATE, {"name": "Tier 2"})
    routed = await desk.run(agent, chat_organising.ROUTE_TO_TEAM,
                            {"phone": phone, "team_id": team.data.id, "reason": "needs a specialist"})
    assert isinstance(routed, Done)
    assert routed.data.state == "HANDOFF_PENDING" and routed.data.assigned_to is None
    assert routed.data.team.name == "Tier 2"
    audit = await desk.db.fetch("SELECT action, details::text FROM team_audit WHERE workspace_id = $1"
                                " AND subject = $2 ORDER BY id", desk.workspace_id, phone)
    assert [row["action"] for row in audit][-2:] == ["chat.released", "chat.routed"]

    other = await builders.workspace(desk.db)
    elsewhere = await desk.run(await desk.member(role="admin", permissions=["all"], workspace_id=other),
                               teams.CREATE, {"name": "Theirs"})
    refused = await desk.run(agent, chat_organising.ROUTE_TO_TEAM, {"phone": phone, "team_id": elsewhere.data.id})
    assert isinstance(refused, Refused) and (refused.status, refused.code) == (400, "invalid_team")
    bad = await desk.run(agent, chat_organising.ROUTE_TO_TEAM, {"phone": phone, "team_id": "Billing"},
                         strict=False)
    assert isinstance(bad, Refused) and bad.code == "invalid_team"
    back = await desk.run(agent, chat_organising.ROUTE_TO_TEAM, {"phone": phone, "team_id": None})
    assert isinstance(back, Done) and back.data.team is None


async def test_off_gives_nothing_and_bad_settings_are_refused_in_their_own_words(desk):
    await online_agents(desk, 1)
    await hand_over(desk, phones(2))
    await trio.sleep(1.0)
    assert set((await holders(desk.db, desk.workspace_id)).values()) == {None}
    admin = await desk.member(role="admin", permissions=["all"])
    for body, code in (({"mode": "fastest"}, "invalid_mode"), ({"mode": "least_busy", "capacity": 0},
                                                                "invalid_capacity")):
        refused = await desk.run(admin, auto_assignment.SAVE_SETTINGS, body)
        assert isinstance(refused, Refused) and refused.code == code
    read = await desk.run(admin, auto_assignment.SETTINGS, {})
    assert isinstance(read, Done) and (read.data.mode, read.data.capacity) == ("off", 10)
