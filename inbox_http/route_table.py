"""The routes the app serves, read from the handlers' own declarations."""

from __future__ import annotations

import re

from quart import Quart

# Calls the spec documents (they keep their shape); every other route is internal and may change.
DOCUMENTED = frozenset({
    ("GET", "/api/reporting/v1/whoami"),
    ("GET", "/api/reporting/v1/conversations"),
    ("GET", "/api/reporting/v1/conversations/unread-summary"),
    ("GET", "/api/reporting/v1/conversations/unanswered"),
    ("GET", "/api/reporting/v1/conversations/{phone}"),
    ("GET", "/api/reporting/v1/conversations/{phone}/messages"),
    ("GET", "/api/reporting/v1/conversations/{phone}/receipts"),
    ("GET", "/api/reporting/v1/conversations/{phone}/seen-by"),
    ("GET", "/api/reporting/v1/conversations/{phone}/views"),
    ("GET", "/api/reporting/v1/conversations/{phone}/replies"),
    ("GET", "/api/reporting/v1/conversations/{phone}/assignment-history"),
    ("GET", "/api/reporting/v1/replies"),
    ("GET", "/api/reporting/v1/messages"),
    ("POST", "/api/send-message"),
    ("POST", "/api/bulk-send"),
    ("GET", "/api/templates"),
    ("GET", "/api/contacts/paginated"),
    # The core API's contact writes (named without a shape; ours are kept as published).
    ("POST", "/api/contacts"),
    *(("PUT", f"/api/contacts/{{phone}}/{field}")
      for field in ("name", "status", "email", "company", "tags", "notes", "attributes")),
    ("DELETE", "/api/contacts/{phone}/attributes/{key}"),
    ("POST", "/api/contacts/{phone}/opt-out"),
    ("POST", "/api/contacts/{phone}/opt-in"),
    ("POST", "/api/mcp"),
    ("GET", "/api/docs/routes"),
    ("GET", "/api/webhook/outbound/config"),
    # Named by the spec without a shape; the shapes are ours and kept as published.
    ("PUT", "/api/webhook/outbound/config"),
    ("POST", "/api/webhook/outbound/rotate-secret"),
    ("POST", "/api/webhook/outbound/test"),
    ("GET", "/api/webhook/outbound/deliveries"),
})

# The spec names `/api/<connector>/*` (any method) in the core API without shapes; ours are kept as published.
DOCUMENTED_PREFIXES = ("/api/zapier/", "/api/make/")

# The agent inbox's pages are no part of the API: a browser's, answered in HTML (docs/inbox-app.md).
WEB_APP_PREFIX = "/app/"

_CONVERTER = re.compile(r"<(?:[a-z]+:)?([a-z_]+)>")


def route_table(app: Quart) -> list[dict[str, object]]:
    rows = []
    for rule in app.url_map.iter_rules():
        if rule.endpoint == "static" or rule.rule.startswith(WEB_APP_PREFIX):
            continue
        view = app.view_functions[rule.endpoint]
        policy = getattr(view, "route_policy", None)
        path = _CONVERTER.sub(r"{\1}", rule.rule)
        for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
            rows.append({
                "endpoint": rule.endpoint,
                "method": method,
                "path": path,
                "documented": (method, path) in DOCUMENTED or path.startswith(DOCUMENTED_PREFIXES),
                "auth": _auth(policy),
                "admin": policy.admin.value if policy is not None and policy.admin is not None else None,
                "tier": policy.tier.value if policy is not None else None,
                "scopes": list(policy.scopes) if policy is not None else [],
                "errors": policy.errors.value if policy is not None else "stable",
                "summary": (view.__doc__ or "").strip().split("\n")[0],
            })
    rows.sort(key=lambda r: (r["path"], r["method"]))
    return rows


def _auth(policy) -> str:
    if policy is None:
        return "none"
    return "api_key_or_session" if policy.admin is not None else "api_key"
