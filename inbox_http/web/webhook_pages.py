"""The workspace's outbound webhook, for members with the settings permission: `/app/webhooks` shows the
settings (endpoint, subscribed events, enabled) and the delivery log, and its forms save the settings, rotate the
signing secret and send a test event.

Each form runs one of the webhook settings' use cases (`use_cases/webhook_settings.py`), the ones the REST routes
bind; their permission and rules (the plan's events, which addresses may receive, the credit alert levels) answer
a refusal the page shows, and the page opens for whoever may read the settings (`webhook_settings.READ`). The log
is the delivery log's use case, keyset-paged and filtered as the REST route's. A signing secret is shown once, on
the page that made it, as the API answers it once.
"""

from __future__ import annotations

import re
from urllib.parse import urlencode

from quart import Blueprint, redirect, request

from inbox_actors.use_cases import webhook_settings
from inbox_actors.use_cases.outcomes import Reason, Refused
from inbox_actors.use_cases.use_case import Kind, UseCase, run
from inbox_actors.webhooks import delivery_log, settings
from inbox_http.dependencies import dependencies
from inbox_http.guard import current_caller
from inbox_http.web.page_guard import WebRefusal, signed_in
from inbox_http.web.pages import page

blueprint = Blueprint("web_webhooks", __name__, url_prefix="/app/webhooks", template_folder="templates")

# How the event catalog's `plan` reads on the page.
PLAN_NAMES = {"any": "Growth and Scale", "scale": "Scale"}
# The log's filters the page passes on (a cursor is tied to them, so no other parameter of the page may reach the
# read), and what a page of it may change beside the cursor.
LOG_FILTERS = ("event", "outcome")
LOG_PAGING = ("limit",)
LOG_EVENTS = webhook_settings.LOG_EVENTS
_DONE = {"saved": "Settings saved.", "test_delivered": "The test event was delivered: see it in the log below.",
         "test_failed": "The test event could not be delivered: its attempts are in the log below."}


def _require(use_case: UseCase) -> None:
    """Checked here before the runner checks it: the runner's refusal would be shown on the settings page, which
    a caller refused may not be allowed to read."""
    if not use_case.allows(current_caller()):
        raise WebRefusal(403, "Webhook settings need the settings or settings:read permission."
                         if use_case.kind is Kind.READ else "Webhook settings need the settings permission.")


async def _run(use_case: UseCase, arguments: dict | None = None):
    _require(use_case)
    return await run(dependencies().use_case_deps, current_caller(), use_case, arguments or {}, strict=False)


@blueprint.get("")
@signed_in
async def webhooks_page():
    _require(webhook_settings.READ)
    return await _settings_page(notice=_DONE.get(request.args.get("done", "")))


@blueprint.post("")
@signed_in
async def save():
    _require(webhook_settings.SAVE)
    form = await request.form
    draft = {"endpoint_url": form.get("endpoint_url", "").strip(), "events": form.getlist("event"),
             "enabled": form.get("enabled") == "on", "credit_alert_levels": form.get("credit_alert_levels", "")}
    try:
        levels = _whole_numbers(draft["credit_alert_levels"])
    except ValueError:
        return await _settings_page(draft=draft, refused=Refused(
            Reason.INVALID, "Credit alert levels are whole numbers separated by commas.", 400, "invalid_body"))
    saved = await _run(webhook_settings.SAVE, {**draft, "credit_alert_levels": levels})
    if isinstance(saved, Refused):
        return await _settings_page(draft=draft, refused=saved)
    if isinstance(saved.data, settings.WebhookConfigWithSecret):
        return await page("webhooks_secret.html", secret=saved.data.secret, first=True)
    return redirect("/app/webhooks?done=saved", 303)


@blueprint.post("/rotate-secret")
@signed_in
async def rotate_secret():
    rotated = await _run(webhook_settings.ROTATE_SECRET)
    if isinstance(rotated, Refused):
        return await _settings_page(refused=rotated)
    return await page("webhooks_secret.html", secret=rotated.data.secret, first=False)


@blueprint.post("/test")
@signed_in
async def send_test():
    sent = await _run(webhook_settings.SEND_TEST)
    if isinstance(sent, Refused):
        return await _settings_page(refused=sent)
    # Its attempts are the log's newest row, which the page shows after the redirect.
    return redirect(f"/app/webhooks?done=test_{sent.data.outcome}", 303)


async def _settings_page(*, notice: str | None = None, refused: Refused | None = None, draft: dict | None = None):
    config = (await _run(webhook_settings.READ)).data
    filters = {name: request.args[name] for name in LOG_FILTERS if request.args.get(name)}
    paging = {name: request.args[name] for name in LOG_PAGING if request.args.get(name)}
    cursor = {"cursor": request.args["cursor"]} if request.args.get("cursor") else {}
    status = refused.status if refused else 200
    log = await _run(webhook_settings.DELIVERIES, {**filters, **paging, **cursor})
    if isinstance(log, Refused):
        log, refused, status = None, refused or log, 400
    else:
        log = log.data
    if draft is None:
        draft = {"endpoint_url": config.endpoint_url, "events": config.events, "enabled": config.enabled or
                 not config.configured, "credit_alert_levels": ", ".join(str(n) for n in config.credit_alert_levels)}
    older_url = None
    if log is not None and log.next_cursor:
        older_url = "/app/webhooks?" + urlencode({**filters, **paging, "cursor": log.next_cursor}) + "#deliveries"
    return await page("webhooks.html", status, config=config, draft=draft,
                      may_change=webhook_settings.SAVE.allows(current_caller()), log=log, filters=filters,
                      log_events=LOG_EVENTS, outcomes=delivery_log.OUTCOMES, plan_names=PLAN_NAMES,
                      older_url=older_url, notice=notice, refusal=refused.message if refused else None)


def _whole_numbers(text: str) -> list[int]:
    """"1000, 500" as [1000, 500]; ValueError on anything else. The levels' own rules are the settings'."""
    return [int(part) for part in re.split(r"[\s,]+", text.strip()) if part]
