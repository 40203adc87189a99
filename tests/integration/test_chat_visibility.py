"""The rule of which chats a member limited to assigned chats sees exists twice, as SQL for the lists and as a
check of a chat already read (the actor, one chat's reads): both forms judge every kind of chat alike."""

from __future__ import annotations

import itertools
import json

from inbox_actors.access import accounts
from persistence.queries import chat_visibility, live_events
from tests import builders


async def test_the_sql_and_the_check_of_a_read_chat_agree_on_every_kind_of_chat(db):
    workspace = (await accounts.create_workspace(db, name="Visibility", plan="scale")).workspace_id
    limited = await builders.member(db, workspace, "agent", assigned_only=True)
    other = await builders.member(db, workspace, "agent")
    open_team, closed_team, foreign_team = [await db.fetchval(
        "INSERT INTO teams (workspace_id, name, queue_visible_to_assigned_only) VALUES ($1, $2, $3) RETURNING id",
        workspace, name, opened) for name, opened in (("Open", True), ("Closed", False), ("Not theirs", True))]
    await db.execute("INSERT INTO team_members (team_id, member_id) VALUES ($1, $3), ($2, $3)",
                     open_team, closed_team, limited)

    chats = {}
    kinds = itertools.product((None, limited, other), ("AI_ONLY", "HANDOFF_PENDING", "HUMAN_ACTIVE"),
                              (None, open_team, closed_team, foreign_team))
    for n, (assigned_to, state, team_id) in enumerate(kinds):
        contact = await db.fetchval("INSERT INTO contacts (workspace_id, phone) VALUES ($1, $2) RETURNING id",
                                    workspace, f"9198000{n:05d}")
        chats[await db.fetchval(
            "INSERT INTO conversations (workspace_id, contact_id, phone, state, assigned_to, team_id)"
            " VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
            workspace, contact, f"9198000{n:05d}", state, assigned_to, team_id)] = (assigned_to, state, team_id)

    for restricted_to in (None, limited, other):
        by_sql = {row["id"] for row in await db.fetch(
            "SELECT c.id FROM conversations c WHERE c.workspace_id = $1 AND " + chat_visibility.visible("c", "$2"),
            workspace, restricted_to)}
        by_check = {chat_id for chat_id, (assigned_to, state, team_id) in chats.items()
                    if await chat_visibility.may_see(
                        db, {"assigned_to": assigned_to, "state": state, "team_id": team_id}, restricted_to)}
        assert by_sql == by_check, restricted_to
        expected = {chat_id for chat_id, (assigned_to, state, team_id) in chats.items()
                    if restricted_to is None or assigned_to == restricted_to
                    or (restricted_to == limited and assigned_to is None and state == "HANDOFF_PENDING"
                        and team_id == open_team)}
        assert by_sql == expected, restricted_to


async def test_an_assigned_only_members_screen_hears_how_a_chat_left_their_sight(db):
    """The live stream's rows for such a member: events of chats they see, and the assignments that took a chat out
    of their sight (taken from them; taken or resolved out of a team queue open to them), none of other chats."""
    workspace = (await accounts.create_workspace(db, name="Left sight", plan="scale")).workspace_id
    limited = await builders.member(db, workspace, "agent", assigned_only=True)
    other = await builders.member(db, workspace, "agent")
    opened, elsewhere = [await db.fetchval(
        "INSERT INTO teams (workspace_id, name, queue_visible_to_assigned_only) VALUES ($1, $2, true) RETURNING id",
        workspace, name) for name in ("Open", "Elsewhere")]
    await db.execute("INSERT INTO team_members (team_id, member_id) VALUES ($1, $2)", opened, limited)
    chats = {"taken_from_queue": opened, "transferred_away": None, "another_teams": elsewhere}
    for n, (name, team_id) in enumerate(chats.items()):
        phone = f"91980001{n:04d}"
        contact = await db.fetchval("INSERT INTO contacts (workspace_id, phone) VALUES ($1, $2) RETURNING id",
                                    workspace, phone)
        await db.execute("INSERT INTO conversations (workspace_id, contact_id, phone, state, assigned_to, team_id)"
                         " VALUES ($1, $2, $3, 'HUMAN_ACTIVE', $4, $5)", workspace, contact, phone, other, team_id)
        taken_from = limited if name == "transferred_away" else None
        await db.execute(
            "INSERT INTO webhook_outbox (workspace_id, event, correlation_id, actor, data)"
            " VALUES ($1, 'conversation_assigned', $2, 'test', $3::jsonb)", workspace, f"left-sight-{n}",
            json.dumps({"phone": phone, "event": "claimed", "from": {"user_id": taken_from} if taken_from else None,
                        "to": {"user_id": other}}))
    rows = await live_events.chat_events_after(db, workspace, 0, ["conversation_assigned"], limited, 100, limited)
    assert sorted(row["phone"] for row in rows) == ["919800010000", "919800010001"]
    everyone = await live_events.chat_events_after(db, workspace, 0, ["conversation_assigned"], None, 100, other)
    assert len(everyone) == 3
