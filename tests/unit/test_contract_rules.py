"""The contract's patterns say exactly what the checks behind them accept (http/openapi.json is fuzzed against the
service; these pin the edges a fuzzer may not reach)."""

from __future__ import annotations

import re
import unicodedata
from datetime import datetime, timezone

import pytest

from inbox_actors.domain import key_rules
from inbox_actors.domain.phones import PHONE_PATTERN, phone_or_none
from inbox_actors.paging import windows
from inbox_actors.paging.parameters import InvalidParameter
from inbox_actors.paging.windows import OLDER_THAN_PATTERN, older_than
from inbox_http.app import create_app
from inbox_http.openapi import build_document

PHONES = ["919876543210", "+91 98765 43210", " 9876543210 ", "12345678", "123456789012345", "1234567",
          "1234567890123456", "+", "", "91-98765", "９１９８７６５４３２１０", "+ 44 20 7946 0958", "4420+79460958",
          "\t447911123456\n"]


@pytest.mark.parametrize("raw", PHONES)
def test_the_phone_pattern_matches_what_normalise_phone_accepts(raw):
    assert bool(re.fullmatch(PHONE_PATTERN, raw)) == (phone_or_none(raw) is not None)


def test_the_older_than_pattern_matches_what_the_window_accepts():
    samples = [f"{n}{unit}" for unit in "smhd" for n in (0, 1, 9, 10, 89, 90, 91, 2159, 2160, 2161, 129599, 129600,
                                                         129601, 7775999, 7776000, 7776001)]
    for raw in samples + ["5", "m", "1w", " 5m ", "-1d", "1.5h"]:
        try:
            older_than(raw)
            accepted = True
        except InvalidParameter:
            accepted = False
        assert bool(re.fullmatch(OLDER_THAN_PATTERN, raw)) == accepted, raw


@pytest.mark.parametrize("bounds", [{"to": "0001-01-01"}, {"until": "0001-01-05T00:00:00+00:00"},
                                    {"since": "0001-01-01", "to": "0001-01-02"}, {"to": "9999-12-31"}])
def test_a_window_at_the_calendar_s_edges_is_a_window_or_a_refusal_never_an_overflow(bounds):
    now = datetime(2026, 11, 27, tzinfo=timezone.utc)
    for limits in (windows.CHAT_LISTS, windows.REPLIES_AND_MESSAGES):
        try:
            found = windows.window(bounds, now, limits)
        except InvalidParameter as err:
            assert err.code in ("invalid_to", "invalid_until"), err.code
        else:
            assert found.start <= found.end


@pytest.mark.parametrize("name", ["zapier", " padded ", "naïve", "\u00a0nbsp", "zero\u200bwidth", "rtl\u202eflip",
                                  "tab\tname", "tag\U000e0041", "   ", "plane\U000f48fd"])
def test_the_key_name_pattern_matches_what_key_name_accepts(name):
    try:
        key_rules.key_name(name)
        accepted = True
    except key_rules.KeyRuleError:
        accepted = False
    assert bool(re.fullmatch(key_rules.NAME_PATTERN, name)) == accepted


def test_characters_refused_in_key_names_are_controls_format_characters_and_separators():
    refused = [chr(code) for low, high in key_rules._REFUSED_RANGES for code in range(low, high + 1)]
    assert {unicodedata.category(character) for character in refused} <= {"Cc", "Cf", "Zl", "Zp", "Cn"}


def test_every_operation_lists_the_statuses_its_kind_answers():
    paths = build_document(create_app(None))["paths"]
    for path, methods in paths.items():
        for method, operation in methods.items():
            statuses = set(operation["responses"])
            assert "500" in statuses, (method, path)
            if "security" in operation:
                assert {"401", "403", "429"} <= statuses, (method, path)
            if "requestBody" in operation:
                assert {"400", "413"} <= statuses, (method, path)
    create = paths["/api/contacts"]["post"]
    assert {"200", "201", "412"} <= set(create["responses"])
    assert create["requestBody"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/CreateBody"}
    send = paths["/api/send-message"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert send["required"] == ["to"] and len(send["anyOf"]) == 4
