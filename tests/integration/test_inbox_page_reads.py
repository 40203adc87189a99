"""The agent inbox's reads (`use_cases/inbox_views.py`, `use_cases/chat_view.py`) with real conversation actors on a
real PostgreSQL: unread counts per member beside the API's per-chat count, the Snoozed view, a sent template's text,
the chat's trail and a contact without a chat (issue 38, defects 6, 7, 9, 10 and 11)."""

from __future__ import annotations

from inbox_actors.platform import templates
from inbox_actors.use_cases import chat_organising, chat_view, chats, inbox_views
from inbox_actors.use_cases.chat_view import ChatView, NewChat
from inbox_actors.use_cases.outcomes import Done, Refused
from persistence.queries import contacts as contact_queries

ASHA, BILAL = "919811500001", "919811500002"


async def _rows(use_cases, caller, view: str) -> dict[str, inbox_views.InboxRow]:
    page = await inbox_views.inbox(use_cases.deps, caller, view)
    assert not isinstance(page, Refused), page
    return {row.phone: row for row in page.rows}


async def test_opening_a_chat_reads_it_for_that_member_alone_and_the_apis_count_is_the_chats(use_cases):
    ann, raj = await use_cases.member(role="admin"), await use_cases.member(permissions=["inbox"])
    await use_cases.customer_writes(ASHA, "Hello?")
    await use_cases.customer_writes(ASHA, "Anyone?")
    assert (await _rows(use_cases, raj, "open"))[ASHA].unread == 2
    opened = await chat_view.open_chat_view(use_cases.deps, ann, ASHA)
    assert isinstance(opened, ChatView) and opened.unread_for_you == 0
    # The API's count is the chat's: opened by a member, it is cleared, as docs/conversations.md says.
    shown = await use_cases.run(raj, chats.SHOW, {"phone": ASHA})
    assert isinstance(shown, Done) and shown.data.unread_count == 0
    # The inbox's is each member's: Raj has not read it.
    assert (await _rows(use_cases, raj, "open"))[ASHA].unread == 2
    assert (await _rows(use_cases, ann, "open"))[ASHA].unread == 0
    page = await inbox_views.inbox(use_cases.deps, raj, "open")
    assert page.counts.open == 1 and (await inbox_views.inbox(use_cases.deps, ann, "open")).counts.open == 0
    # Raj marks it read from the page: read for Raj too.
    assert isinstance(await use_cases.run(raj, chats.MARK_READ, {"phone": ASHA}), Done)
    assert (await _rows(use_cases, raj, "open"))[ASHA].unread == 0
    await use_cases.customer_writes(ASHA, "Still there?")
    assert (await _rows(use_cases, ann, "open"))[ASHA].unread == 1


async def test_a_snoozed_chat_is_in_the_snoozed_view_only_until_the_customer_writes(use_cases):
    raj = await use_cases.member(permissions=["inbox"])
    await use_cases.customer_writes(ASHA)
    assert isinstance(await use_cases.run(raj, chats.CLAIM, {"phone": ASHA}), Done)
    assert isinstance(await use_cases.run(raj, chat_organising.SNOOZE, {"phone": ASHA}), Done)
    for view in ("mine", "unassigned", "open"):
        assert ASHA not in await _rows(use_cases, raj, view), view
    snoozed = (await _rows(use_cases, raj, "snoozed"))[ASHA]
    assert snoozed.snoozed and snoozed.snoozed_until is None
    await use_cases.customer_writes(ASHA, "Back again")
    assert ASHA not in await _rows(use_cases, raj, "snoozed")
    assert ASHA in await _rows(use_cases, raj, "mine")


async def test_a_template_reads_as_the_customer_got_it_and_the_trail_says_who_did_what(use_cases):
    ann, raj = await use_cases.member(role="admin"), await use_cases.member(permissions=["inbox"])
    await templates.add_template(use_cases.db, workspace_id=use_cases.workspace_id, name="order_update",
                                 language="en", body="Hello {{1}}, your order {{2}} is on its way.")
    await use_cases.customer_writes(ASHA)
    assert isinstance(await use_cases.run(ann, chats.CLAIM, {"phone": ASHA}), Done)
    sent = await use_cases.run(ann, chats.REPLY_TEMPLATE, {"phone": ASHA, "template": "order_update",
                                                           "parameters": ["Asha", "A-1"]})
    assert isinstance(sent, Done), sent
    assert isinstance(await use_cases.run(ann, chats.TRANSFER, {"phone": ASHA, "to_user_id": raj.member_id,
                                                                "reason": "Speaks Hindi"}), Done)
    assert (await _rows(use_cases, raj, "mine"))[ASHA].preview == "Hello Asha, your order A-1 is on its way."
    view = await chat_view.chat_view(use_cases.deps, raj, ASHA)
    assert isinstance(view, ChatView)
    template = next(message for message in view.messages if message.template_name)
    assert view.texts[template.id] == "Hello Asha, your order A-1 is on its way."
    assert [(entry.action, entry.reason) for entry in view.trail] == [("claimed", None),
                                                                      ("transferred", "Speaks Hindi")]
    assert view.handed_over is not None and view.handed_over.by.user_id == ann.member_id
    kinds = ["event" if hasattr(item, "action") else item.sender_type for item in view.timeline()]
    assert kinds == ["customer", "event", "agent", "event"], kinds
    # Anyone else reading it sees no hand-over of theirs.
    assert (await chat_view.chat_view(use_cases.deps, ann, ASHA)).handed_over is None


async def test_a_contact_without_a_chat_opens_as_a_new_chat_with_the_templates_to_start_one(use_cases):
    agent = await use_cases.member()
    await templates.add_template(use_cases.db, workspace_id=use_cases.workspace_id, name="hello", language="en",
                                 body="Hello {{1}}")
    await contact_queries.insert_contact_if_absent(use_cases.db, use_cases.workspace_id, BILAL, "Bilal")
    opened = await chat_view.open_chat_view(use_cases.deps, agent, BILAL)
    assert isinstance(opened, NewChat) and opened.name == "Bilal" and [t.name for t in opened.templates] == ["hello"]
    nobody = await chat_view.open_chat_view(use_cases.deps, agent, "919811599999")
    assert isinstance(nobody, Refused) and nobody.message == chats.NO_SUCH_CHAT
