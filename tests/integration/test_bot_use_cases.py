"""The bot's use cases at their own level: for each, the runner's permission check, a broken field rule's code and
what it does, on a real PostgreSQL and without HTTP; and the operator's command line running them, audited as no
member. The doors' tests (e2e) check only how each maps the outcome."""

from __future__ import annotations

import dataclasses

from inbox_actors.bot import settings
from inbox_actors.use_cases import bot
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.outcomes import Done, Reason, Refused
from inbox_actors.use_cases.use_case import run

READER = ["ai_agent:read"]


def refused(outcome, status: int, code: str) -> bool:
    return isinstance(outcome, Refused) and (outcome.status, outcome.code) == (status, code)


async def audit(use_cases) -> list[tuple]:
    rows = await use_cases.db.fetch("SELECT action, member_id, via FROM team_audit WHERE workspace_id = $1"
                                    " ORDER BY id", use_cases.workspace_id)
    return [tuple(row) for row in rows]


async def test_reading_the_settings_needs_ai_agent_or_its_read(use_cases):
    outsider = await use_cases.member(permissions=["inbox"])
    denied = await use_cases.run(outsider, bot.SETTINGS, {})
    assert refused(denied, 403, "permission_denied") and denied.reason is Reason.PERMISSION
    assert "get_bot_settings needs the ai_agent:read permission" in denied.message
    assert not bot.SETTINGS.allows(outsider)
    reader = await use_cases.member(permissions=READER)
    assert refused(await use_cases.run(reader, bot.SETTINGS, {"extra": 1}), 400, "invalid_arguments")
    shown = await use_cases.run(reader, bot.SETTINGS, {})
    assert isinstance(shown, Done) and shown.data == settings.BotSettings(
        enabled=True, persona="", handoff_message="", updated_at=None, updated_by=None)


async def test_the_behaviour_is_changed_by_ai_behavior_edit_alone_and_audited(use_cases):
    forgotten: list[int] = []
    deps = dataclasses.replace(use_cases.deps, forget_bot=forgotten.append)
    reader = await use_cases.member(permissions=[*READER, "ai_provision"])
    assert refused(await run(deps, reader, bot.CHANGE_BEHAVIOUR, {"persona": "Ada"}), 403, "permission_denied")
    editor = await use_cases.member(permissions=["ai_behavior_edit"])
    too_long = await run(deps, editor, bot.CHANGE_BEHAVIOUR, {"persona": "x" * (settings.MAX_PERSONA + 1)})
    assert refused(too_long, 400, "invalid_arguments") and "persona must be at most 60" in too_long.message
    control = await run(deps, editor, bot.CHANGE_BEHAVIOUR, {"handoff_message": "bad\x07"})
    assert refused(control, 400, "invalid_arguments") and control.message.startswith("handoff_message")
    assert forgotten == [] and await audit(use_cases) == []

    changed = await run(deps, editor, bot.CHANGE_BEHAVIOUR, {"persona": "  Ada   Lovelace ",
                                                               "handoff_message": " A person will answer. "})
    assert isinstance(changed, Done)
    assert (changed.data.persona, changed.data.handoff_message) == ("Ada Lovelace", "A person will answer.")
    assert changed.data.enabled and changed.data.updated_by.user_id == editor.member_id
    kept = await run(deps, editor, bot.CHANGE_BEHAVIOUR, {"handoff_message": ""})  # what is left out is kept
    assert isinstance(kept, Done) and (kept.data.persona, kept.data.handoff_message) == ("Ada Lovelace", "")
    assert forgotten == [use_cases.workspace_id] * 2
    assert await audit(use_cases) == [("bot.changed", editor.member_id, editor.author)] * 2


async def test_switching_the_bot_needs_ai_provision(use_cases):
    editor = await use_cases.member(permissions=["ai_behavior_edit", "ai_kb_edit"])
    assert refused(await use_cases.run(editor, bot.SWITCH, {"enabled": False}), 403, "permission_denied")
    provisioner = await use_cases.member(permissions=["ai_provision"])
    assert refused(await use_cases.run(provisioner, bot.SWITCH, {"enabled": "maybe"}, strict=False), 400,
                   "invalid_arguments")
    assert refused(await use_cases.run(provisioner, bot.SWITCH, {}), 400, "invalid_arguments")
    off = await use_cases.run(provisioner, bot.SWITCH, {"enabled": "false"}, strict=False)  # as a form sends it
    assert isinstance(off, Done) and off.data.enabled is False
    on = await use_cases.run(provisioner, bot.SWITCH, {"enabled": True})
    assert isinstance(on, Done) and on.data.enabled is True


async def test_answers_are_added_with_ai_kb_edit_by_the_bot_s_rules(use_cases):
    reader = await use_cases.member(permissions=READER)
    assert refused(await use_cases.run(reader, bot.ADD_ANSWER, {"keywords": ["price"], "answer": "10"}), 403,
                   "permission_denied")
    editor = await use_cases.member(permissions=["ai_kb_edit"])
    none = await use_cases.run(editor, bot.ADD_ANSWER, {"keywords": [], "answer": "10"})
    assert refused(none, 400, "invalid_arguments") and "1 to 20 keywords" in none.message
    empty = await use_cases.run(editor, bot.ADD_ANSWER, {"keywords": ["price"], "answer": ""})
    assert refused(empty, 400, "invalid_arguments") and "1 to 4,096 characters" in empty.message
    handoff = await use_cases.run(editor, bot.ADD_ANSWER, {"keywords": ["travel agent"], "answer": "Trips."})
    assert refused(handoff, 400, "invalid_answer") and "contains a hand-off phrase" in handoff.message
    blank = await use_cases.run(editor, bot.ADD_ANSWER, {"keywords": ["price"], "answer": "   "})
    assert refused(blank, 400, "invalid_answer")
    # A NUL (which PostgreSQL's text refuses) or another control character is the caller's mistake, never a 500.
    for keywords, answer in ((["pri\x00ce"], "10"), (["price"], "10\x00"), (["price\nlist"], "10")):
        control = await use_cases.run(editor, bot.ADD_ANSWER, {"keywords": keywords, "answer": answer})
        assert refused(control, 400, "invalid_arguments"), (keywords, answer)

    added = await use_cases.run(editor, bot.ADD_ANSWER, {"keywords": ["Price", "how much?"], "answer": " 10 "})
    assert isinstance(added, Done) and (added.data.keywords, added.data.answer) == (["price", "how much"], "10")
    assert await audit(use_cases) == [("bot_answer.added", editor.member_id, editor.author)]


async def test_answers_are_listed_with_ai_agent(use_cases):
    editor = await use_cases.member(permissions=["ai_kb_edit"])
    added = await use_cases.run(editor, bot.ADD_ANSWER, {"keywords": ["hours"], "answer": "9 to 5"})
    assert refused(await use_cases.run(editor, bot.ANSWERS, {}), 403, "permission_denied")
    reader = await use_cases.member(permissions=READER)
    assert refused(await use_cases.run(reader, bot.ANSWERS, {"workspace_id": 1}), 400, "invalid_arguments")
    listed = await use_cases.run(reader, bot.ANSWERS, {})
    assert isinstance(listed, Done) and listed.data.data == [added.data]


async def test_answers_are_removed_with_ai_kb_edit_and_audited(use_cases):
    editor = await use_cases.member(permissions=["ai_kb_edit"])
    added = await use_cases.run(editor, bot.ADD_ANSWER, {"keywords": ["hours"], "answer": "9 to 5"})
    answer_id = added.data.answer_id
    reader = await use_cases.member(permissions=READER)
    assert refused(await use_cases.run(reader, bot.REMOVE_ANSWER, {"answer_id": answer_id}), 403,
                   "permission_denied")
    assert refused(await use_cases.run(editor, bot.REMOVE_ANSWER, {"answer_id": -1}), 400, "invalid_arguments")
    removed = await use_cases.run(editor, bot.REMOVE_ANSWER, {"answer_id": answer_id})
    assert isinstance(removed, Done) and removed.data == settings.AnswerRemoved(answer_id, True)
    again = await use_cases.run(editor, bot.REMOVE_ANSWER, {"answer_id": answer_id})
    assert refused(again, 404, "not_found") and f"no answer {answer_id}" in again.message
    assert [entry[0] for entry in await audit(use_cases)] == ["bot_answer.added", "bot_answer.removed"]


async def test_the_hand_off_trail_needs_ai_audit_view(use_cases):
    reader = await use_cases.member(permissions=READER)
    assert refused(await use_cases.run(reader, bot.HANDOFFS, {}), 403, "permission_denied")
    auditor = await use_cases.member(permissions=["ai_audit_view"])
    assert refused(await use_cases.run(auditor, bot.HANDOFFS, {"limit": 0}), 400, "invalid_arguments")
    assert refused(await use_cases.run(auditor, bot.HANDOFFS, {"cursor": "not-a-cursor"}), 400, "invalid_cursor")
    assert refused(await use_cases.run(auditor, bot.HANDOFFS, {"since": "2030-01-02", "to": "2030-01-01"}), 400,
                   "since_after_to")
    trail = await use_cases.run(auditor, bot.HANDOFFS, {"limit": 10})
    assert isinstance(trail, Done) and trail.data.data == [] and trail.data.next_cursor is None


async def test_the_operator_runs_the_answers_use_cases_audited_as_no_member(use_cases):
    operator = Caller.operator(use_cases.workspace_id)
    added = await use_cases.run(operator, bot.ADD_ANSWER, {"keywords": ["price"], "answer": "10"})
    assert isinstance(added, Done)
    removed = await use_cases.run(operator, bot.REMOVE_ANSWER, {"answer_id": added.data.answer_id})
    assert isinstance(removed, Done)
    assert await audit(use_cases) == [("bot_answer.added", None, "cli"), ("bot_answer.removed", None, "cli")]
