"""Keyset cursors remember the call that gave them out (paging/cursors.py)."""

from datetime import datetime, timezone

import pytest
from werkzeug.datastructures import MultiDict

from inbox_actors.paging import cursors
from inbox_actors.paging.parameters import InvalidParameter

AT = datetime(2026, 11, 26, 3, 0, tzinfo=timezone.utc)


def test_a_cursor_reads_back_with_the_same_parameters_in_any_order_and_any_limit():
    first = MultiDict([("state", "HUMAN_ACTIVE"), ("sort", "waiting_longest"), ("limit", "2")])
    cursor = cursors.encode("chats", first, AT, 7)
    again = MultiDict([("sort", "waiting_longest"), ("cursor", cursor), ("limit", "50"), ("state", "HUMAN_ACTIVE")])
    assert cursors.decode(again, "chats", datetime, int) == (AT, 7)


@pytest.mark.parametrize("changed", [
    [("state", "AI_ONLY"), ("sort", "waiting_longest")],        # another filter value
    [("sort", "waiting_longest")],                              # a filter dropped
    [("state", "HUMAN_ACTIVE"), ("sort", "last_activity")],     # another sort
    [("state", "HUMAN_ACTIVE"), ("sort", "waiting_longest"), ("q", "ann")],  # a filter added
    [("state", "HUMAN_ACTIVE"), ("state", "AI_ONLY"), ("sort", "waiting_longest")],  # a value repeated
])
def test_a_cursor_passed_with_other_filters_or_sort_is_invalid(changed):
    cursor = cursors.encode("chats", MultiDict([("state", "HUMAN_ACTIVE"), ("sort", "waiting_longest")]), AT, 7)
    with pytest.raises(InvalidParameter) as refused:
        cursors.decode(MultiDict([*changed, ("cursor", cursor)]), "chats", datetime, int)
    assert refused.value.code == "invalid_cursor" and "other filters" in refused.value.message


def test_a_plain_dict_of_arguments_is_fingerprinted_as_a_request_s_are():
    cursor = cursors.encode("chats", {"state": "HUMAN_ACTIVE"}, AT, 7)
    assert cursors.decode(MultiDict([("state", "HUMAN_ACTIVE"), ("cursor", cursor)]), "chats", datetime, int)


@pytest.mark.parametrize("raw", ["", "x" * 600, "not base64!", "W10", cursors.encode("other", {}, AT, 7)])
def test_a_cursor_cut_edited_or_of_another_list_is_invalid(raw):
    with pytest.raises(InvalidParameter) as refused:
        cursors.decode({"cursor": raw}, "chats", datetime, int)
    assert refused.value.code == "invalid_cursor"
