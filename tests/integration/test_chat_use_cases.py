"""The chat use cases at their own level: the runner's permission and argument checks, then each rule
`use_cases/chats.py` states, with real conversation actors on a real PostgreSQL and no HTTP. The doors' tests
(e2e) check only how each maps the outcome."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import msgspec

from inbox_actors.reporting.conversation_detail import ConversationDetail
from inbox_actors.use_cases import chat_organising, chat_reads, chats
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.fields import MAX_REASON
from inbox_actors.use_cases.outcomes import Done, Reason, Refused

PHONE = "919811100001"


async def test_a_caller_without_the_permission_is_refused_before_anything_happens(use_cases):
    reader = await use_cases.member(permissions=["contacts"])
    await use_cases.customer_writes(PHONE)
    outcome = await use_cases.run(reader, chats.CLAIM, {"phone": PHONE})
    assert isinstance(outcome, Refused) and (outcome.reason, outcome.status) == (Reason.PERMISSION, 403)
    assert "claim_conversation needs the inbox permission" in outcome.message and "your role" in outcome.message
    assert not chats.CLAIM.allows(reader) and chats.SHOW.allows(reader)  # what a page asks before offering it
    shown = await use_cases.run(reader, chats.SHOW, {"phone": PHONE})
    assert isinstance(shown, Done) and shown.data.claimed_by is None


async def test_arguments_are_checked_by_the_declared_struct_with_the_field_s_own_code(use_cases):
    agent = await use_cases.member(permissions=["inbox"])
    await use_cases.customer_writes(PHONE)
    too_long = await use_cases.run(agent, chats.RELEASE, {"phone": PHONE, "reason": "x" * (MAX_REASON + 1)})
    control = await use_cases.run(agent, chats.RESOLVE, {"phone": PHONE, "reason": "bad\x07"})
    assert isinstance(too_long, Refused) and (too_long.status, too_long.code) == (400, "invalid_reason")
    assert isinstance(control, Refused) and control.code == "invalid_reason"
    unknown = await use_cases.run(agent, chats.CLAIM, {"phone": PHONE, "extra": 1})
    assert isinstance(unknown, Refused) and (unknown.code, unknown.reason) == ("invalid_arguments", Reason.INVALID)
    assert unknown.message.startswith("Invalid arguments:")


async def test_a_snooze_until_without_a_zone_or_in_the_past_is_invalid_until(use_cases):
    agent = await use_cases.member(permissions=["inbox"])
    await use_cases.customer_writes(PHONE)
    for until in ("2030-01-01T10:00:00", "tomorrow", 12):
        outcome = await use_cases.run(agent, chat_organising.SNOOZE, {"phone": PHONE, "until": until})
        assert isinstance(outcome, Refused) and (outcome.status, outcome.code) == (400, "invalid_until"), until
    past = (datetime.now(timezone.utc) - timedelta(minutes=1)).isoformat()
    outcome = await use_cases.run(agent, chat_organising.SNOOZE, {"phone": PHONE, "until": past})
    assert isinstance(outcome, Refused) and outcome.code == "invalid_until"
    later = (datetime.now(timezone.utc) + timedelta(hours=1)).isoformat()
    snoozed = await use_cases.run(agent, chat_organising.SNOOZE, {"phone": PHONE, "until": later})
    assert isinstance(snoozed, Done) and snoozed.data.snoozed


async def test_an_assigned_only_member_sees_and_acts_on_its_own_chats_alone(use_cases):
    admin = await use_cases.member(role="admin")
    limited = await use_cases.member(permissions=["inbox"], assigned_only=True)
    await use_cases.customer_writes(PHONE)
    for use_case in (chats.SHOW, chats.CLAIM, chats.MARK_READ):
        outcome = await use_cases.run(limited, use_case, {"phone": PHONE})
        assert isinstance(outcome, Refused) and outcome.message == chats.NO_SUCH_CHAT, use_case.name
    claimed = await use_cases.run(admin, chats.CLAIM, {"phone": PHONE})
    assert isinstance(claimed, Done)
    moved = await use_cases.run(admin, chats.TRANSFER, {"phone": PHONE, "to_user_id": limited.member_id})
    assert isinstance(moved, Done) and moved.data.claimed_by.user_id == limited.member_id
    # After a release the member still sees the chat it acted on, though it left its view.
    released = await use_cases.run(limited, chats.RELEASE, {"phone": PHONE, "reason": "shift over"})
    assert isinstance(released, Done) and released.data.state == "HANDOFF_PENDING"


async def test_a_state_that_does_not_allow_the_action_is_refused_with_the_state(use_cases):
    agent = await use_cases.member(permissions=["inbox"])
    await use_cases.customer_writes(PHONE)
    outcome = await use_cases.run(agent, chats.RELEASE, {"phone": PHONE})
    assert isinstance(outcome, Refused) and outcome.status == 409 and outcome.state == "AI_ONLY"


async def test_a_note_is_text_never_blank_and_never_sent(use_cases):
    agent = await use_cases.member(permissions=["inbox"])
    await use_cases.customer_writes(PHONE)
    blank = await use_cases.run(agent, chat_organising.ADD_NOTE, {"phone": PHONE, "text": "   "})
    assert isinstance(blank, Refused) and blank.code == "invalid_text"
    sent_before = len(use_cases.platform.sent)
    note = await use_cases.run(agent, chat_organising.ADD_NOTE, {"phone": PHONE, "text": "  call back Monday \n"})
    assert isinstance(note, Done) and note.data.type == "note" and note.data.text == "call back Monday"
    assert len(use_cases.platform.sent) == sent_before


async def test_nothing_is_sent_while_the_workspace_s_cloud_api_is_off(use_cases):
    agent = await use_cases.member(permissions=["inbox", "whatsapp_api"])
    await use_cases.customer_writes(PHONE)
    switched_off = msgspec.structs.replace(agent, cloud_api_enabled=False)
    for use_case, arguments in ((chats.REPLY_TEXT, {"phone": PHONE, "text": "hi"}),
                                (chats.SEND_TEXT, {"to": PHONE, "text": "hi"})):
        outcome = await use_cases.run(switched_off, use_case, arguments)
        assert isinstance(outcome, Refused) and outcome.code == "feature_disabled_for_org", use_case.name
    assert use_cases.platform.sent == []
    replied = await use_cases.run(agent, chats.REPLY_TEXT, {"phone": PHONE, "text": "  hi  "})
    assert isinstance(replied, Done) and replied.data.conversation.state == "HUMAN_ACTIVE"
    assert [request.text for _, request in use_cases.platform.sent] == ["hi"]


async def test_a_form_s_text_stands_for_the_value_it_names_only_when_not_strict(use_cases):
    admin = await use_cases.member(role="admin")
    other = await use_cases.member(permissions=["inbox"])
    await use_cases.customer_writes(PHONE)
    assert isinstance(await use_cases.run(admin, chats.CLAIM, {"phone": PHONE}), Done)
    strict = await use_cases.run(admin, chats.TRANSFER, {"phone": PHONE, "to_user_id": str(other.member_id)})
    assert isinstance(strict, Refused) and strict.code == "invalid_arguments"
    form = await use_cases.run(admin, chats.TRANSFER, {"phone": PHONE, "to_user_id": str(other.member_id)},
                               strict=False)
    assert isinstance(form, Done) and isinstance(form.data, ConversationDetail)


async def test_the_operator_is_stopped_by_no_permission(use_cases):
    await use_cases.customer_writes(PHONE)
    operator = Caller.operator(use_cases.workspace_id)
    assert all(use_case.allows(operator) for use_case in (chats.CLAIM, chats.SEND_TEXT, chats.SHOW))
    assert operator.is_operator and operator.who == "the caller"


async def test_a_template_filter_no_template_can_match_is_refused_in_its_own_words(use_cases):
    agent = await use_cases.member(permissions=["templates"])
    for field, code in (("name", "invalid_name"), ("language", "invalid_language"), ("status", "invalid_status")):
        outcome = await use_cases.run(agent, chat_reads.LIST_TEMPLATES, {field: "x\x00"})
        assert isinstance(outcome, Refused) and (outcome.status, outcome.code) == (400, code), field
    none = await use_cases.run(agent, chat_reads.LIST_TEMPLATES, {"name": "no such template", "language": "x"})
    assert isinstance(none, Done) and none.data == {"data": []}


async def test_a_members_key_sends_a_reply_or_a_note_once_and_answers_as_the_first_did(use_cases):
    agent = await use_cases.member(permissions=["inbox"])
    other = await use_cases.member(permissions=["inbox"])
    await use_cases.customer_writes(PHONE)
    reply = {"phone": PHONE, "text": "On its way", "idempotency_key": "k-1"}
    first = await use_cases.run(agent, chats.REPLY_TEXT, reply)
    again = await use_cases.run(agent, chats.REPLY_TEXT, reply)
    assert isinstance(first, Done) and isinstance(again, Done)
    assert again.data.messageId == first.data.messageId and again.data.conversation.state == "HUMAN_ACTIVE"
    assert [request.text for _, request in use_cases.platform.sent] == ["On its way"]
    changed = await use_cases.run(agent, chats.REPLY_TEXT, {**reply, "text": "On its way!"})
    assert isinstance(changed, Refused) and (changed.status, changed.code) == (422, "idempotency_key_reused")
    note = {"phone": PHONE, "text": "Asked twice", "idempotency_key": "k-1"}  # the same key, another use case
    notes = [await use_cases.run(caller, chat_organising.ADD_NOTE, note) for caller in (agent, agent, other)]
    assert all(isinstance(outcome, Done) for outcome in notes)
    assert notes[0].data.id == notes[1].data.id != notes[2].data.id  # the other member's key is theirs
    bad = await use_cases.run(agent, chats.REPLY_TEXT, {**reply, "idempotency_key": "has space"})
    assert isinstance(bad, Refused) and bad.code == "invalid_idempotency_key"
    long = await use_cases.run(agent, chats.REPLY_TEXT, {"phone": PHONE, "text": "x" * 4097})
    assert isinstance(long, Refused) and long.message.startswith("A reply is 1 to 4,096 characters")
    assert len(use_cases.platform.sent) == 1
