import pytest

from inbox_actors.domain.scopes import InvalidScopes, covers, is_read_only, parse_scopes


def test_parse_normalises_and_deduplicates():
    assert parse_scopes(["inbox", " contacts:read", "inbox"]) == ("contacts:read", "inbox")


@pytest.mark.parametrize("raw, problem", [
    ([], "at least one"),
    (["", " "], "at least one"),
    (["inbox", "telepathy"], "telepathy"),
    (["whatsapp_api:read"], "whatsapp_api:read"),  # no read variant in the scope table
    (["all", "inbox"], "cannot be combined"),
])
def test_parse_refuses_bad_lists(raw, problem):
    with pytest.raises(InvalidScopes, match=problem):
        parse_scopes(raw)


def test_read_only_means_every_scope_is_a_read_variant():
    assert is_read_only(["inbox:read", "contacts:read"])
    assert not is_read_only(["inbox:read", "contacts"])
    assert not is_read_only(["all"])
    assert not is_read_only([])


@pytest.mark.parametrize("granted, required, method, expected", [
    (["all"], ["settings"], "DELETE", True),
    (["inbox"], ["inbox", "contacts"], "POST", True),
    (["contacts:read"], ["inbox", "contacts"], "GET", True),
    (["contacts:read"], ["inbox", "contacts"], "HEAD", True),
    (["contacts:read"], ["inbox", "contacts"], "POST", False),
    (["analytics"], ["inbox", "contacts"], "GET", False),
    (["analytics"], [], "GET", True),
    (["inbox:read"], [], "POST", True),  # no scope needed; read-only is a separate rule
])
def test_covers(granted, required, method, expected):
    assert covers(granted, required, method) is expected
