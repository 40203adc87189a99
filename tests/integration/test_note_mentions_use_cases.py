"""Mentions in notes at the use cases' level, with real conversation actors on a real PostgreSQL: a note's members
found, stored with it and answered; a keyed note retried is one note, one mention each and one event; a member's
mentions, seen when they open the chat or say so; whom a note may mention; and a member limited to their assigned
chats, who hears of no mention in a chat they may not see."""

from __future__ import annotations

from inbox_actors.use_cases import chat_organising, chats, mentions
from inbox_actors.use_cases.outcomes import Done, Refused

PHONE, OTHER = "919811700001", "919811700002"


def _refs(note) -> list[tuple[int, str | None]]:
    return [(member.user_id, member.name) for member in note.mentions]


async def _mentions(use_cases, caller) -> mentions.MyMentions:
    listed = await use_cases.run(caller, mentions.MY_MENTIONS, {})
    assert isinstance(listed, Done)
    return listed.data


async def test_a_keyed_note_retried_is_one_note_with_its_mentions_told_once(use_cases):
    writer = await use_cases.member(permissions=["inbox"])
    told = await use_cases.member(permissions=["inbox"])
    other = await use_cases.member(permissions=["inbox"])
    await use_cases.customer_writes(PHONE)
    named = await use_cases.db.fetchval("SELECT name FROM members WHERE id = $1", told.member_id)
    note = {"phone": PHONE, "idempotency_key": "n-1",
            "text": f"@{named} call back; @[me](member:{writer.member_id}), @[gone](member:999999), @nobody"}
    first = await use_cases.run(writer, chat_organising.ADD_NOTE, note)
    again = await use_cases.run(writer, chat_organising.ADD_NOTE, note)
    assert isinstance(first, Done) and isinstance(again, Done)
    assert again.data.id == first.data.id and first.data.text == note["text"]
    writer_name = await use_cases.db.fetchval("SELECT name FROM members WHERE id = $1", writer.member_id)
    assert _refs(first.data) == _refs(again.data) == [(told.member_id, named), (writer.member_id, writer_name)]
    rows = await use_cases.db.fetch(
        "SELECT member_id, spans, seen_at IS NOT NULL AS seen FROM note_mentions WHERE message_id = $1"
        " ORDER BY spans[1]", first.data.id)
    assert [(row["member_id"], list(row["spans"]), row["seen"]) for row in rows] == [
        (told.member_id, [0, 1 + len(named)], False),  # the writer's own mention is seen as it is written
        (writer.member_id, [len(named) + 13, len(named) + 13 + len(f"@[me](member:{writer.member_id})")], True)]
    events = await use_cases.db.fetch(
        "SELECT data FROM webhook_outbox WHERE workspace_id = $1 AND event = 'chat_changed'"
        " AND data ->> 'change' = 'note'", use_cases.workspace_id)
    assert len(events) == 1 and '"mentioned": [' + str(told.member_id) + "]" in events[0]["data"]

    # Each member's mentions: the told one's, not seen yet; the one not named has none.
    mine = await _mentions(use_cases, told)
    assert mine.unseen == 1 and [(m.note_id, m.phone, m.seen) for m in mine.data] == [(first.data.id, PHONE, False)]
    assert [piece.member.user_id for piece in mine.data[0].pieces if piece.member] == [
        told.member_id, writer.member_id]
    assert "".join(piece.text for piece in mine.data[0].pieces) == note["text"]
    assert (await _mentions(use_cases, other)).data == []
    # A note without a key, naming nobody: nothing stored, no one told.
    plain = await use_cases.run(writer, chat_organising.ADD_NOTE, {"phone": PHONE, "text": "email a@b.example"})
    assert isinstance(plain, Done) and plain.data.mentions == []

    # Opening the chat sees its mentions.
    opened = await use_cases.run(told, chats.OPEN, {"phone": PHONE})
    assert isinstance(opened, Done)
    mine = await _mentions(use_cases, told)
    assert mine.unseen == 0 and [m.seen for m in mine.data] == [True]


async def test_mentions_seen_by_chat_or_all_and_whom_a_note_may_mention(use_cases):
    writer = await use_cases.member(permissions=["inbox"])
    told = await use_cases.member(permissions=["inbox"])
    reader = await use_cases.member(permissions=["inbox:read"])
    away = await use_cases.member(permissions=["inbox"])
    await use_cases.db.execute("UPDATE members SET status = 'suspended' WHERE id = $1", away.member_id)
    for phone in (PHONE, OTHER):
        await use_cases.customer_writes(phone)
        for text in (f"@[x](member:{told.member_id}) one", f"@[x](member:{told.member_id}) two",
                     f"@[x](member:{away.member_id}) suspended"):
            assert isinstance(await use_cases.run(writer, chat_organising.ADD_NOTE, {"phone": phone, "text": text}),
                              Done)
    assert (await _mentions(use_cases, told)).unseen == 4
    counted = await use_cases.run(told, mentions.UNSEEN_MENTIONS, {})
    assert isinstance(counted, Done) and counted.data == {"unseen": 4}
    one = await use_cases.run(told, mentions.MARK_MENTIONS_SEEN, {"phone": PHONE})
    assert isinstance(one, Done) and one.data == {"seen": 2}
    unseen = await use_cases.run(told, mentions.MY_MENTIONS, {"unseen_only": True})
    assert isinstance(unseen, Done) and {m.phone for m in unseen.data.data} == {OTHER}
    every = await use_cases.run(told, mentions.MARK_MENTIONS_SEEN, {})
    assert isinstance(every, Done) and every.data == {"seen": 2}
    assert (await _mentions(use_cases, told)).unseen == 0
    nowhere = await use_cases.run(told, mentions.MARK_MENTIONS_SEEN, {"phone": "919811799999"})
    assert isinstance(nowhere, Refused) and nowhere.status == 404
    # Reading them is the chat's permission; marking them seen is an action on chats, as opening one is.
    assert mentions.MY_MENTIONS.allows(reader) and not mentions.MARK_MENTIONS_SEEN.allows(reader)
    offered = await use_cases.run(writer, mentions.MENTIONABLE, {})
    assert isinstance(offered, Done)
    ids = {member.user_id for member in offered.data}
    assert {writer.member_id, told.member_id} <= ids and away.member_id not in ids  # the suspended are not offered
    assert all(member.insert.startswith("@") for member in offered.data)


async def test_an_assigned_only_member_hears_of_no_mention_in_a_chat_they_may_not_see(use_cases):
    writer = await use_cases.member(role="admin")
    limited = await use_cases.member(permissions=["inbox"], assigned_only=True)
    await use_cases.customer_writes(PHONE)
    note = await use_cases.run(writer, chat_organising.ADD_NOTE,
                               {"phone": PHONE, "text": f"@[you](member:{limited.member_id}) see this?"})
    assert isinstance(note, Done) and _refs(note.data)[0][0] == limited.member_id
    assert (await _mentions(use_cases, limited)) == mentions.MyMentions(unseen=0, data=[])
    assert isinstance(await use_cases.run(writer, chats.CLAIM, {"phone": PHONE}), Done)
    moved = await use_cases.run(writer, chats.TRANSFER, {"phone": PHONE, "to_user_id": limited.member_id})
    assert isinstance(moved, Done)
    mine = await _mentions(use_cases, limited)
    assert mine.unseen == 1 and [m.note_id for m in mine.data] == [note.data.id]
