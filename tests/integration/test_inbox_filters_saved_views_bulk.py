"""The agent inbox's filters, saved views and bulk actions as use cases (`use_cases/inbox_views.py`,
`use_cases/saved_views.py`, `use_cases/bulk_actions.py`), with real conversation actors on a real PostgreSQL
(issue 38: "filters, saved views per member, and bulk actions")."""

from __future__ import annotations

from datetime import datetime, timezone

from inbox_actors.labels import label_set
from inbox_actors.use_cases import bulk_actions, chat_organising, chats, inbox_views, saved_views
from inbox_actors.use_cases.outcomes import Done, Refused

ASHA, BILAL, CHEN, DIVYA = "919811600001", "919811600002", "919811600003", "919811600004"


async def _listed(use_cases, caller, **arguments) -> list[str]:
    outcome = await use_cases.run(caller, inbox_views.INBOX, arguments, strict=False)
    assert isinstance(outcome, Done), outcome
    return [row.phone for row in outcome.data.rows]


async def _four_chats(use_cases):
    """Asha's with Ann (VIP), Bilal's with Raj, Chen's waiting for a person, Divya's with the bot."""
    ann, raj = await use_cases.member(role="admin"), await use_cases.member(permissions=["inbox"])
    await label_set.create(use_cases.db, use_cases.workspace_id, None, "cli", label_set.CreateLabel(name="VIP"),
                           datetime.now(timezone.utc))
    for phone in (DIVYA, CHEN, BILAL, ASHA):
        await use_cases.customer_writes(phone, "Hello?")
    for caller, phone in ((ann, ASHA), (raj, BILAL), (raj, CHEN)):
        assert isinstance(await use_cases.run(caller, chats.CLAIM, {"phone": phone}), Done)
    assert isinstance(await use_cases.run(raj, chats.RELEASE, {"phone": CHEN}), Done)
    assert isinstance(await use_cases.run(ann, chat_organising.ADD_LABEL, {"phone": ASHA, "label": "vip"}), Done)
    return ann, raj


async def test_each_filter_narrows_the_view_and_the_counts_follow(use_cases):
    ann, raj = await _four_chats(use_cases)
    assert await _listed(use_cases, ann, view="open") == [ASHA, BILAL, CHEN, DIVYA]
    # A label of the set, whatever its case; an assignee: me, nobody, a member.
    assert await _listed(use_cases, ann, view="open", label="VIP") == [ASHA]
    assert await _listed(use_cases, ann, view="open", label="Gone") == []  # a label the set lacks
    assert await _listed(use_cases, ann, view="open", assignee="me") == [ASHA]
    assert await _listed(use_cases, ann, view="open", assignee="none") == [CHEN, DIVYA]
    assert await _listed(use_cases, ann, view="open", assignee=str(raj.member_id)) == [BILAL]
    # The chat's state, as its row names it.
    assert await _listed(use_cases, ann, view="open", state="HANDOFF_PENDING") == [CHEN]
    assert await _listed(use_cases, ann, view="queue", state="HANDOFF_PENDING") == [CHEN]
    # Waiting longer than: by the database's clock, as each row shows the wait.
    await use_cases.db.execute("UPDATE conversations SET waiting_since = now() - interval '2 hours',"
                               " waiting_for_person_since = now() - interval '90 minutes' WHERE phone = $1", CHEN)
    assert await _listed(use_cases, ann, view="open", waiting="60") == [CHEN]
    assert await _listed(use_cases, ann, view="queue", waiting="100") == []
    assert await _listed(use_cases, ann, view="queue", waiting="80") == [CHEN]
    # Unread is the member's own: Ann opens Asha's chat.
    assert isinstance(await use_cases.run(ann, chats.OPEN, {"phone": ASHA}), Done)
    assert await _listed(use_cases, ann, view="open", unread="true") == [BILAL, CHEN, DIVYA]
    assert await _listed(use_cases, raj, view="open", unread="true") == [ASHA, BILAL, CHEN, DIVYA]
    # Filters together; the counts of every view under them, and how many the view holds.
    page = (await use_cases.run(ann, inbox_views.INBOX, {"view": "open", "unread": True, "assignee": "none"})).data
    assert [row.phone for row in page.rows] == [CHEN, DIVYA] and page.matching == 2
    assert (page.counts.open, page.counts.queue, page.counts.mine, page.counts.unassigned) == (2, 1, 0, 2)
    assert page.counts.queue_total == 1
    unfiltered = (await use_cases.run(ann, inbox_views.INBOX, {"view": "open"})).data
    assert unfiltered.matching is None and unfiltered.counts.open == 3


async def test_a_filters_broken_rule_is_its_own_code_and_a_page_walks_on(use_cases):
    ann, _ = await _four_chats(use_cases)
    for arguments, code in (({"view": "all"}, "invalid_view"), ({"assignee": "someone"}, "invalid_assignee"),
                            ({"state": "open"}, "invalid_state"), ({"waiting": "0"}, "invalid_waiting"),
                            ({"waiting": "lots"}, "invalid_waiting"), ({"unread": "maybe"}, "invalid_unread"),
                            ({"label": "x" * 51}, "invalid_label"),
                            ({"colour": "red"}, "invalid_arguments")):
        refused = await use_cases.run(ann, inbox_views.INBOX, arguments, strict=False)
        assert isinstance(refused, Refused) and (refused.status, refused.code) == (400, code), (arguments, refused)
    # Pages keyset-walked under the filters; a cursor is the filters' own.
    for n in range(inbox_views.PAGE_SIZE + 2):
        await use_cases.customer_writes(f"9198117{n:05d}", "Hi")
    first = (await use_cases.run(ann, inbox_views.INBOX, {"view": "open", "assignee": "none"})).data
    assert len(first.rows) == inbox_views.PAGE_SIZE and first.next_cursor
    second = (await use_cases.run(ann, inbox_views.INBOX, {"view": "open", "assignee": "none",
                                                            "cursor": first.next_cursor})).data
    phones = [row.phone for row in first.rows + second.rows]
    assert len(phones) == len(set(phones)) == inbox_views.PAGE_SIZE + 4 and second.next_cursor is None
    other = await use_cases.run(ann, inbox_views.INBOX, {"view": "open", "unread": True,
                                                          "cursor": first.next_cursor})
    assert isinstance(other, Refused) and other.status == 400


async def test_saved_views_are_the_members_own_with_their_limits(use_cases):
    ann, raj = await _four_chats(use_cases)
    saved = await use_cases.run(ann, saved_views.SAVE, {"name": "  VIP   waiting ", "filters": {
        "view": "open", "label": "VIP", "unread": True}})
    assert isinstance(saved, Done) and saved.data.name == "VIP waiting"
    assert saved.data.filters == inbox_views.ListFilter(view=inbox_views.View.OPEN, label="VIP", unread=True)
    view_id = saved.data.id
    for arguments, status, code in (
            ({"name": "vip WAITING"}, 409, "name_taken"), ({"name": ""}, 400, "invalid_name"),
            ({"name": " "}, 400, "invalid_name"), ({"name": "x" * 61}, 400, "invalid_name"),
            ({"name": "a", "filters": {"waiting": 0}}, 400, "invalid_waiting"),
            ({"name": "a", "filters": {"label": "x\ny"}}, 400, "invalid_label"),
            ({"name": "a", "filters": {"view": "everything"}}, 400, "invalid_view")):
        refused = await use_cases.run(ann, saved_views.SAVE, arguments)
        assert isinstance(refused, Refused) and (refused.status, refused.code) == (status, code), arguments
    # Another member's are not Ann's: Raj lists none, renames and deletes none of hers.
    assert (await use_cases.run(raj, saved_views.LIST, {})).data.data == []
    for use_case, arguments in ((saved_views.CHANGE, {"view_id": view_id, "name": "Mine now"}),
                                (saved_views.DELETE, {"view_id": view_id})):
        refused = await use_cases.run(raj, use_case, arguments)
        assert isinstance(refused, Refused) and refused.status == 404
    # Renamed, then its filters replaced; deleted.
    renamed = await use_cases.run(ann, saved_views.CHANGE, {"view_id": view_id, "name": "VIPs"})
    assert renamed.data.name == "VIPs" and renamed.data.filters.label == "VIP"
    changed = await use_cases.run(ann, saved_views.CHANGE, {"view_id": view_id, "filters": {"view": "mine"}})
    assert changed.data.name == "VIPs" and changed.data.filters == inbox_views.ListFilter(view=inbox_views.View.MINE)
    assert [v.name for v in (await use_cases.run(ann, saved_views.LIST, {})).data.data] == ["VIPs"]
    assert isinstance(await use_cases.run(ann, saved_views.DELETE, {"view_id": view_id}), Done)
    assert (await use_cases.run(ann, saved_views.LIST, {})).data.data == []
    # At most MAX_SAVED_VIEWS a member.
    for n in range(saved_views.MAX_SAVED_VIEWS):
        assert isinstance(await use_cases.run(raj, saved_views.SAVE, {"name": f"View {n}"}), Done)
    full = await use_cases.run(raj, saved_views.SAVE, {"name": "One more"})
    assert isinstance(full, Refused) and (full.status, full.code) == (409, "too_many_saved_views")


async def test_a_bulk_resolve_reports_each_chat_and_runs_once_per_key(use_cases):
    ann, raj = await _four_chats(use_cases)
    arguments = {"phones": [ASHA, BILAL, CHEN, DIVYA, ASHA], "idempotency_key": "form-1"}
    outcome = await use_cases.run(ann, bulk_actions.RESOLVE, arguments)
    assert isinstance(outcome, Done), outcome
    report = outcome.data
    assert (report.done, report.refused) == (3, 1)
    by_phone = {result.phone: result for result in report.results}
    assert [result.phone for result in report.results] == [ASHA, BILAL, CHEN, DIVYA]
    assert by_phone[DIVYA].code == "invalid_transition" and "nothing to resolve" in by_phone[DIVYA].message
    assert by_phone[ASHA].done and by_phone[ASHA].state == "AI_ONLY"
    # The same form again (a double click): the first report, nothing done twice.
    resolved = await use_cases.db.fetchval("SELECT count(*) FROM assignment_events WHERE event = 'resolved'")
    again = await use_cases.run(ann, bulk_actions.RESOLVE, arguments)
    assert isinstance(again, Done) and again.data == report
    assert await use_cases.db.fetchval("SELECT count(*) FROM assignment_events WHERE event = 'resolved'") == resolved
    reused = await use_cases.run(ann, bulk_actions.SNOOZE, arguments)
    assert isinstance(reused, Refused) and reused.status == 422
    # Another member's key of the same text is another key.
    theirs = await use_cases.run(raj, bulk_actions.RESOLVE, arguments)
    assert theirs.data.done == 0 and theirs.data.refused == 4


async def test_bulk_assign_label_and_snooze_go_through_each_chats_use_case(use_cases):
    ann, raj = await _four_chats(use_cases)
    assigned = await use_cases.run(ann, bulk_actions.ASSIGN, {"phones": [ASHA, CHEN, DIVYA],
                                                              "to_user_id": raj.member_id, "reason": "Hindi"})
    assert assigned.data.done == 3, assigned.data
    rows = await use_cases.db.fetch("SELECT phone, assigned_to, state FROM conversations WHERE phone = ANY($1)",
                                    [ASHA, CHEN, DIVYA])
    assert {(row["assigned_to"], row["state"]) for row in rows} == {(raj.member_id, "HUMAN_ACTIVE")}
    mine = await use_cases.run(raj, bulk_actions.ASSIGN, {"phones": [BILAL], "to_user_id": raj.member_id})
    assert mine.data.refused == 1 and "already assigned" in mine.data.results[0].message
    labelled = await use_cases.run(raj, bulk_actions.LABEL, {"phones": [BILAL, CHEN], "label": "vip"})
    assert labelled.data.done == 2
    assert set(await _listed(use_cases, raj, view="open", label="VIP")) == {CHEN, BILAL, ASHA}
    snoozed = await use_cases.run(raj, bulk_actions.SNOOZE, {"phones": [BILAL, CHEN], "for_hours": 4})
    assert snoozed.data.done == 2
    assert set(await _listed(use_cases, raj, view="snoozed")) == {CHEN, BILAL}
    for use_case, arguments, code in (
            (bulk_actions.ASSIGN, {"phones": [ASHA], "to_user_id": 0}, "invalid_to_user_id"),
            (bulk_actions.ASSIGN, {"phones": [ASHA], "to_user_id": 999999}, "invalid_member"),
            (bulk_actions.LABEL, {"phones": [ASHA], "label": ""}, "invalid_label"),
            (bulk_actions.SNOOZE, {"phones": [ASHA], "for_hours": 0}, "invalid_for_hours"),
            (bulk_actions.RESOLVE, {"phones": []}, "invalid_phones"),
            (bulk_actions.RESOLVE, {"phones": [str(n) for n in range(101)]}, "invalid_phones")):
        refused = await use_cases.run(raj, use_case, arguments)
        assert isinstance(refused, Refused) and (refused.status, refused.code) == (400, code), arguments
    # A member who only reads acts on none (the runner's permission, as for one chat).
    reader = await use_cases.member(permissions=["inbox:read"])
    refused = await use_cases.run(reader, bulk_actions.RESOLVE, {"phones": [ASHA]})
    assert isinstance(refused, Refused) and refused.status == 403
