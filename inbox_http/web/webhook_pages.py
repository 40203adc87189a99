"""The workspace's outbound webhook, for members with the settings permission: `/app/webhooks` shows the
settings (endpoint, subscribed events, enabled) and the delivery log, and its forms save the settings, rotate the
signing secret and send a test event.

Each form is one of the settings use cases (`actions/settings.py`), the same the REST routes call under the same
permission (`permissions.SETTINGS`, reads also `settings:read`); their rules (the plan's events, which addresses
may receive, the credit alert levels) answer a refusal the page shows. The log is the REST route's read
(`webhooks/delivery_log.py`), keyset-paged and filtered the same way. A signing secret is shown once, on the page
that made it, as the API answers it once.
"""

from __future__ import annotations

import re
from urllib.parse import urlencode

from quart import Blueprint, redirect, request

from inbox_actors.actions import permissions
from inbox_actors.actions import settings as settings_actions
from inbox_actors.actions.outcomes import Reason, Refused
from inbox_actors.domain import events
from inbox_actors.paging.parameters import InvalidParameter
from inbox_actors.webhooks import delivery_log, settings
from inbox_http.services import services
from inbox_http.web.page_guard import WebRefusal, current_caller, signed_in
from inbox_http.web.pages import page

blueprint = Blueprint("web_webhooks", __name__, url_prefix="/app/webhooks", template_folder="templates")

# How the event catalog's `plan` reads on the page.
PLAN_NAMES = {"any": "Growth and Scale", "scale": "Scale"}
# The log's filters the page passes on (a cursor is tied to them, so no other parameter of the page may reach the
# read), and what a page of it may change beside the cursor.
LOG_FILTERS = ("event", "outcome")
LOG_PAGING = ("limit",)
LOG_EVENTS = (*events.ALL_EVENTS, events.WEBHOOK_TEST)
_DONE = {"saved": "Settings saved.", "test_delivered": "The test event was delivered: see it in the log below.",
         "test_failed": "The test event could not be delivered: its attempts are in the log below."}


def _may(method: str) -> bool:
    return current_caller().may(permissions.SETTINGS, method)


def _require(method: str) -> None:
    if not _may(method):
        raise WebRefusal(403, "Webhook settings need the settings permission."
                         if method != "GET" else "Webhook settings need the settings or settings:read permission.")


@blueprint.get("")
@signed_in
async def webhooks_page():
    _require("GET")
    return await _settings_page(notice=_DONE.get(request.args.get("done", "")))


@blueprint.post("")
@signed_in
async def save():
    _require("POST")
    form = await request.form
    draft = {"endpoint_url": form.get("endpoint_url", "").strip(), "events": form.getlist("event"),
             "enabled": form.get("enabled") == "on", "credit_alert_levels": form.get("credit_alert_levels", "")}
    try:
        levels = _whole_numbers(draft["credit_alert_levels"])
    except ValueError:
        return await _settings_page(draft=draft, refused=Refused(
            Reason.INVALID, "Credit alert levels are whole numbers separated by commas.", 400, "invalid_body"))
    saved = await settings_actions.save_webhook_settings(
        services().action_deps, current_caller(),
        settings.SaveSettings(endpoint_url=draft["endpoint_url"], events=draft["events"], enabled=draft["enabled"],
                              credit_alert_levels=levels))
    if isinstance(saved, Refused):
        return await _settings_page(draft=draft, refused=saved)
    if isinstance(saved, settings.WebhookConfigWithSecret):
        return await page("webhooks_secret.html", secret=saved.secret, first=True)
    return redirect("/app/webhooks?done=saved", 303)


@blueprint.post("/rotate-secret")
@signed_in
async def rotate_secret():
    _require("POST")
    rotated = await settings_actions.rotate_webhook_secret(services().action_deps, current_caller())
    if isinstance(rotated, Refused):
        return await _settings_page(refused=rotated)
    return await page("webhooks_secret.html", secret=rotated.secret, first=False)


@blueprint.post("/test")
@signed_in
async def send_test():
    _require("POST")
    sent = await settings_actions.send_webhook_test(services().action_deps, current_caller())
    if isinstance(sent, Refused):
        return await _settings_page(refused=sent)
    # Its attempts are the log's newest row, which the page shows after the redirect.
    return redirect(f"/app/webhooks?done=test_{sent.outcome}", 303)


async def _settings_page(*, notice: str | None = None, refused: Refused | None = None, draft: dict | None = None):
    state, caller = services(), current_caller()
    config = await settings.read_config(state.db, caller.workspace_id, caller.plan)
    filters = {name: request.args[name] for name in LOG_FILTERS if request.args.get(name)}
    paging = {name: request.args[name] for name in LOG_PAGING if request.args.get(name)}
    log_args = {**filters, **paging, **({"cursor": request.args["cursor"]} if request.args.get("cursor") else {})}
    status = refused.status if refused else 200
    try:
        log = await delivery_log.delivery_log(state.db, caller.workspace_id, log_args)
    except InvalidParameter as err:
        log, refused, status = None, refused or Refused(Reason.INVALID, err.message, 400, err.code), 400
    if draft is None:
        draft = {"endpoint_url": config.endpoint_url, "events": config.events, "enabled": config.enabled or
                 not config.configured, "credit_alert_levels": ", ".join(str(n) for n in config.credit_alert_levels)}
    older_url = None
    if log is not None and log.next_cursor:
        older_url = "/app/webhooks?" + urlencode({**filters, **paging, "cursor": log.next_cursor}) + "#deliveries"
    return await page("webhooks.html", status, config=config, draft=draft, may_change=_may("POST"), log=log,
                      filters=filters, log_events=LOG_EVENTS, outcomes=delivery_log.OUTCOMES, plan_names=PLAN_NAMES,
                      older_url=older_url, notice=notice, refusal=refused.message if refused else None)


def _whole_numbers(text: str) -> list[int]:
    """"1000, 500" as [1000, 500]; ValueError on anything else. The levels' own rules are the settings'."""
    return [int(part) for part in re.split(r"[\s,]+", text.strip()) if part]
