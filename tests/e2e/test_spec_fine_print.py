"""The specification's fine print: each test quotes the line of the spec it holds the service to."""

from __future__ import annotations

from tests.e2e.chat_helpers import scale_workspace
from tests.e2e.conftest import bearer

# The spec, Plans: "Core API (Growth and Scale):" and the calls it lists (the connectors are checked in
# test_connectors.py).
CORE_API = [
    ("POST", "/api/send-message"),
    ("POST", "/api/bulk-send"),
    ("GET", "/api/templates"),
    ("POST", "/api/contacts"),
    ("PUT", "/api/contacts/{phone}/name"),
    ("PUT", "/api/contacts/{phone}/status"),
    ("PUT", "/api/contacts/{phone}/email"),
    ("PUT", "/api/contacts/{phone}/company"),
    ("PUT", "/api/contacts/{phone}/tags"),
    ("PUT", "/api/contacts/{phone}/notes"),
    ("PUT", "/api/contacts/{phone}/attributes"),
    ("DELETE", "/api/contacts/{phone}/attributes/{key}"),
    ("POST", "/api/contacts/{phone}/opt-out"),
    ("POST", "/api/contacts/{phone}/opt-in"),
    ("GET", "/api/reporting/v1/whoami"),
]
# "Endpoints named without a shape": those with a path.
NAMED = [
    ("GET", "/api/reporting/v1/messages"),
    ("POST", "/api/webhook/outbound/test"),
    ("GET", "/api/webhook/outbound/deliveries"),
    ("POST", "/api/webhook/outbound/rotate-secret"),
    ("POST", "/api/mcp"),
    # General conventions, 4: "`GET /api/docs/routes` lists those routes (over 500) for reference only."
    ("GET", "/api/docs/routes"),
]


async def test_every_call_the_spec_names_is_listed_as_documented(service):
    # General conventions, 4: "Only the calls documented here are supported for integrations and keep their
    # shape. Every other route accepts the same key but is the web app's internal interface: undocumented,
    # unsupported, and may change or vanish without notice."
    _, _, _, key = await scale_workspace(service.db)
    answer = await service.client.get("/api/docs/routes", headers=bearer(key))
    assert answer.status_code == 200, answer.text
    rows = {(row["method"], row["path"]): row for row in answer.json()["data"]}
    for call in CORE_API:
        assert rows[call]["documented"] is True and rows[call]["tier"] == "core", rows[call]
    for call in NAMED:
        assert rows[call]["documented"] is True, rows[call]
    # The service's own calls (the spec gives no path) are not promised to integrations.
    for call in (("POST", "/api/inbox/conversations/{phone}/claim"), ("GET", "/api/team/members"),
                 ("POST", "/api/keys")):
        assert rows[call]["documented"] is False, rows[call]
