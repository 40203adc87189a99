"""Schemathesis hooks for scripts/fuzz_contract.py (loaded with SCHEMATHESIS_HOOKS in the fuzzer's process).

Positive cases are kept inside the rules JSON Schema cannot state, so that "valid data must be accepted" tests
what the contract does promise; negative cases are left as generated:
- a cursor is only ever one the service issued (any other text is invalid_cursor by design): dropped;
- since and to are judged together and against now (since_after_to, window_too_large): dropped when the
  strictest window (90 days) would refuse them;
- business hours must also make sense (a known time zone, each opening closing after it opens, no overlaps):
  replaced by usable ones when they do not;
- the roster never touches the fuzzing admin (whose key every call uses): a member id naming it is replaced by
  one nobody has;
- custom attributes' names must stay distinct once trimmed (" a" and "a" are given twice): one is dropped;
- a bot answer's keywords must hold a word and no hand-off phrase, its answer more than blanks: replaced by a
  usable answer when they do not;
- a snooze's `until` must be in the future: dropped (until the customer writes) when it is not;
- a label put on a chat must be one of the workspace's: the fuzzing workspace's (FUZZ_LABEL in the environment);
- a pricing sheet's CSV must be one its rules accept: replaced by a usable file when it is not; an item's
  valid_until must not come before its valid_from, and a change naming one date alone may not fit the stored other:
  the date is dropped;
- a team report's `tz` must be a time zone this machine knows: dropped when it is not; a goal's target must fit
  its figure (at most 100 for a percentage): lowered to that;
- ids and addresses that must exist: a transfer goes to the workspace's member (FUZZ_MEMBER_ID), a goal is for
  the workspace or that member, a chat is routed to the workspace's own queue (the workspace has no team), a webhook
  endpoint and a connector's hook target are the local receiver (FUZZ_RECEIVER_URL: host names do not resolve
  while fuzzing).

`POST /api/mcp` takes an MCP token, never the fuzzer's API key: every case of it (positive and negative) is sent
with a token the hooks make once through `POST /api/mcp/tokens` with that key, so the cases reach the JSON-RPC
layer instead of all being 401 invalid_token.

One check is added: a send the platform refused is answered 500 (send-message) or 502 (an agent's reply) with
the platform's errorCode, as the spec has it; any other 5xx, of any route, is a server error. (Schemathesis'
own not_a_server_error is told to let 500 and 502 through, for this check to judge them.)
"""

from __future__ import annotations

import os
import uuid
from datetime import datetime, timedelta, timezone

import requests
import schemathesis
from schemathesis import GenerationMode

from inbox_actors.conversations.bot import BotAnswerError, keyword_list
from inbox_actors.domain.business_hours import InvalidBusinessHours, parse_business_hours
from inbox_actors.domain.phones import phone_or_none
from inbox_actors.domain.time_zones import is_time_zone
from inbox_actors.paging import windows
from inbox_actors.paging.parameters import InvalidParameter
from inbox_actors.team.goals import MAX_SECONDS, MAX_TARGET
from inbox_actors.use_cases.outcomes import Refused
from inbox_actors.use_cases.pricing_sheets import csv_items

# Business hours the schema allows but the service refuses (a time zone nobody knows, a close before its open,
# overlapping openings) are replaced in positive cases by these.
USABLE_HOURS = {"time_zone": "UTC", "weekly": {"mon": [{"open": "09:00", "close": "17:00"}]}}
# A member id no workspace has: the roster calls aimed at the fuzzing admin go here instead.
NOBODY = 2**62
SEND_ROUTES = {("POST", "/api/send-message"), ("POST", "/api/inbox/conversations/{phone}/reply")}
_WINDOW_NAMES = ("since", "from", "to", "until")
BULK_SEND = ("POST", "/api/bulk-send")
BOT_ANSWERS = ("POST", "/api/bot/answers")
SNOOZE = ("POST", "/api/inbox/conversations/{phone}/snooze")
CHAT_LABELS = ("POST", "/api/inbox/conversations/{phone}/labels")
PRICING_CSV = ("PUT", "/api/bot/pricing-sheets/{sheet_id}/items.csv")
NEW_PRICING_ITEM = ("POST", "/api/bot/pricing-sheets/{sheet_id}/items")
PRICING_ITEM_CHANGE = ("PATCH", "/api/bot/pricing-sheets/{sheet_id}/items/{item_id}")
ROUTE_TO_TEAM = ("POST", "/api/inbox/conversations/{phone}/team")
TEAM_REPORT = ("GET", "/api/team/report")
SET_GOAL = ("PUT", "/api/team/goals")
USABLE_CSV = "name,price,currency\r\nHaircut,19.00,EUR\r\n"
USABLE_ANSWER = {"keywords": ["shipping"], "answer": "Orders ship within two days."}
# The fuzzing workspace's template (scripts/fuzz_contract.py), as a broadcast must name it.
USABLE_TEMPLATE = {"name": "order_update", "language": "en", "parameters": ["Asha", "A-1"]}


@schemathesis.hook
def map_case(context, case):
    if case.meta is None or case.meta.generation.mode is not GenerationMode.POSITIVE:
        return case
    if isinstance(case.path_parameters, dict) and case.path_parameters.get("member_id") is not None \
            and str(case.path_parameters["member_id"]) == os.environ.get("FUZZ_MEMBER_ID"):
        case.path_parameters["member_id"] = NOBODY  # the fuzzing admin is never suspended, demoted or removed
    if isinstance(case.query, dict):
        case.query.pop("cursor", None)
        if any(name in case.query for name in _WINDOW_NAMES) and not _window_allowed(case.query):
            for name in _WINDOW_NAMES:
                case.query.pop(name, None)
    route = (case.method.upper(), case.operation.path)
    if isinstance(case.body, dict) and route == BULK_SEND:
        _usable_broadcast(case.body)
    if isinstance(case.body, dict) and route == BOT_ANSWERS and not _usable_answer(case.body):
        case.body = dict(USABLE_ANSWER)
    if isinstance(case.body, dict) and route == SNOOZE and not _in_future(case.body.get("until")):
        case.body.pop("until", None)
    if isinstance(case.body, dict) and route == CHAT_LABELS and os.environ.get("FUZZ_LABEL"):
        case.body["label"] = os.environ["FUZZ_LABEL"]
    if route == PRICING_CSV and (not isinstance(case.body, str) or isinstance(csv_items(case.body), Refused)):
        case.body = USABLE_CSV
    if isinstance(case.body, dict) and route in (NEW_PRICING_ITEM, PRICING_ITEM_CHANGE):
        _usable_dates(case.body, change=route == PRICING_ITEM_CHANGE)
    if isinstance(case.body, dict) and route == ROUTE_TO_TEAM:
        case.body["team_id"] = None          # the fuzzing workspace has no team: its own queue
    if isinstance(case.query, dict) and route == TEAM_REPORT and not is_time_zone(str(case.query.get("tz", "UTC"))):
        case.query.pop("tz", None)
    if isinstance(case.body, dict) and route == SET_GOAL:
        _usable_goal(case.body)
    if isinstance(case.body, dict):
        if isinstance(case.body.get("idempotency_key"), str):
            # A key of its own per case: the same key with other arguments is rightly refused 422.
            case.body["idempotency_key"] = f"fuzz-{uuid.uuid4().hex}"
        if "to_user_id" in case.body and os.environ.get("FUZZ_MEMBER_ID"):
            case.body["to_user_id"] = int(os.environ["FUZZ_MEMBER_ID"])
        for url_field in ("endpoint_url", "target_url"):  # a webhook endpoint, a connector's REST hook
            if url_field in case.body and os.environ.get("FUZZ_RECEIVER_URL"):
                case.body[url_field] = os.environ["FUZZ_RECEIVER_URL"]
        if isinstance(case.body.get("attributes"), dict):
            case.body["attributes"] = _distinct_attributes(case.body["attributes"])
        if isinstance(case.body.get("business_hours"), dict) and not _usable_hours(case.body["business_hours"]):
            case.body["business_hours"] = USABLE_HOURS
    return case


def _usable_goal(body: dict) -> None:
    """A goal for the workspace or the fuzzing admin (no team exists), its target within its figure's range."""
    body.pop("team_id", None)
    if body.get("member_id") is not None and os.environ.get("FUZZ_MEMBER_ID"):
        body["member_id"] = int(os.environ["FUZZ_MEMBER_ID"])
    target = body.get("target")
    if isinstance(target, (int, float)) and not isinstance(target, bool):
        body["target"] = min(target, MAX_TARGET.get(str(body.get("metric")), MAX_SECONDS))


def _usable_answer(body: dict) -> bool:
    try:
        keyword_list(body.get("keywords") or [])
    except BotAnswerError:
        return False
    return bool(str(body.get("answer") or "").strip())


def _usable_dates(body: dict, *, change: bool) -> None:
    """An item's dates in order; a change names both or neither (the stored other may not fit the one named)."""
    valid_from, valid_until = body.get("valid_from"), body.get("valid_until")
    out_of_order = valid_from is not None and valid_until is not None and str(valid_until) < str(valid_from)
    if change and (out_of_order or ("valid_from" in body) != ("valid_until" in body)):
        body.pop("valid_from", None)
        body.pop("valid_until", None)
    elif out_of_order:
        body.pop("valid_until")


def _in_future(raw: object) -> bool:
    if raw is None:
        return True
    try:
        at = datetime.fromisoformat(str(raw).replace("Z", "+00:00"))
    except ValueError:
        return False
    return at.tzinfo is not None and at > datetime.now(timezone.utc) + timedelta(minutes=1)


def _distinct_attributes(attributes: dict) -> dict:
    """Custom attributes whose names stay distinct once trimmed (" a" and "a" are one name, given twice)."""
    kept: dict = {}
    seen: set[str] = set()
    for name, value in attributes.items():
        if name.strip() not in seen:
            seen.add(name.strip())
            kept[name] = value
    return kept


def _usable_broadcast(body: dict) -> None:
    """A broadcast the service can send: the fuzzing workspace's template with its two parameters, phones it
    accepts, a schedule within the allowed range (the rest of the body as generated)."""
    body["template"] = USABLE_TEMPLATE
    recipients = body.get("recipients") if isinstance(body.get("recipients"), list) else []
    for n, recipient in enumerate(recipients):
        if isinstance(recipient, dict):
            recipient["phone"] = _usable_phone(recipient.get("phone"), n)
            if recipient.get("parameters") is not None:
                recipient["parameters"] = USABLE_TEMPLATE["parameters"]
        else:
            recipients[n] = _usable_phone(recipient, n)
    if not recipients:
        body["recipients"] = [_usable_phone(None, 0)]
    scheduled = body.get("scheduled_at")
    if scheduled is not None:
        try:
            at = datetime.fromisoformat(str(scheduled))
            usable = at.tzinfo is not None and datetime.now(timezone.utc) < at < \
                datetime.now(timezone.utc) + timedelta(days=80)
        except ValueError:
            usable = False
        if not usable:
            body.pop("scheduled_at")


def _usable_phone(raw: object, n: int) -> str:
    return raw if isinstance(raw, str) and phone_or_none(raw) is not None else f"9190000{n:05}"


def _usable_hours(hours: dict) -> bool:
    try:
        parse_business_hours(hours)
    except InvalidBusinessHours:
        return False
    return True


def _window_allowed(query: dict) -> bool:
    args = {name: str(query[name]) for name in _WINDOW_NAMES if name in query}
    try:
        windows.window(args, datetime.now(timezone.utc), windows.REPLIES_AND_MESSAGES)
    except InvalidParameter:
        return False
    return True


MCP_ENDPOINT = ("POST", "/api/mcp")
_mcp_tokens: dict[str, str] = {}  # the fuzzer's API key -> the MCP token made with it


@schemathesis.hook
def before_call(context, case, kwargs):
    if (case.method.upper(), case.operation.path) != MCP_ENDPOINT:
        return
    key = case.operation.schema.config.headers_for(operation=case.operation).get("Authorization")
    if key is None:
        return
    if key not in _mcp_tokens:
        made = requests.post(f"{case.operation.schema.get_base_url()}/api/mcp/tokens", json={"name": "fuzzer"},
                             headers={"Authorization": key}, timeout=30)
        made.raise_for_status()
        _mcp_tokens[key] = made.json()["token"]
    kwargs["auth"] = _McpToken(key, _mcp_tokens[key])


class _McpToken(requests.auth.AuthBase):
    """Puts the MCP token in place of the API key on the prepared request (the configured header is applied before
    it); a case sent without that header, or with another on purpose (the auth checks), is left as it is."""

    def __init__(self, key: str, token: str) -> None:
        self.key, self.token = key, token

    def __call__(self, prepared):
        if prepared.headers.get("Authorization") == self.key:
            prepared.headers["Authorization"] = f"Bearer {self.token}"
        return prepared


@schemathesis.check
def server_errors_are_platform_refusals(ctx, response, case):
    if response.status_code < 500:
        return None
    try:
        body = response.json()
    except ValueError:
        body = None
    refusal = isinstance(body, dict) and "errorCode" in body
    if (case.method.upper(), case.operation.path) not in SEND_ROUTES or not refusal:
        raise AssertionError(f"{response.status_code}: a server error (only a send the platform refused, with its "
                             "errorCode, may answer 5xx)")
    return None
