"""The chat's composer: the forms a member writes with (a reply, a template, a note), each sent exactly once.

Every form carries its own idempotency key, a fresh random one rendered with it (and again after each answer
that settles it), which the form's use case holds per member (`use_cases/keyed_sends.py`): a second click, a
retry after a timeout or a resend after reconnecting answers as the first request did and sends nothing again.
A second request that arrives while the first is still under way (its key held, or its message at the platform)
waits here for the first's answer (`run_composed`), rather than being told to retry as the API is.

A refused form comes back with what was typed and a person's sentence beside it (`Composer`), never emptied. It
keeps its key only while the first send's outcome is not known (a retry must not send again); any settled answer
(sent, refused before sending, refused by the platform) gives the form a new key for the next message. The reply
form may carry a file (`attachments.py`); a file is never kept by a refused form (a browser cannot put one back),
its text is. A reply refused because the customer's window closed meanwhile keeps its box, with its text, beside
the templates the composer then offers.

Canned responses: the composer offers the workspace's (`canned_choices`, read through the declared list each time
the composer is rendered, so the whole page, the pane and the part after a send all show them) and carries the
values of their placeholders (`fills`: the contact's name and first name, the member's name) for the script, which
inserts one as "/" and its shortcut are typed. Without the script the list's Insert button posts the reply form
to `canned_insert.py`, which answers the page with the text added to what was typed (`with_canned`).
"""

from __future__ import annotations

import secrets
from typing import Any

import msgspec
import trio
from quart import Quart, g

from inbox_actors.canned_responses import placeholders
from inbox_actors.canned_responses.canned_set import CannedResponse
from inbox_actors.use_cases import attachments, canned_responses, keyed_sends
from inbox_actors.use_cases.outcomes import Done, Outcome, Refused
from inbox_actors.use_cases.use_case import UseCase, run
from inbox_http.dependencies import dependencies
from inbox_http.guard import current_caller

KEY_FIELD = "idempotency_key"
# How long a request waits for the answer of an earlier one with its key, and how often it looks.
WAIT_FOR_FIRST_SECONDS = 10.0
LOOK_EVERY_SECONDS = 0.2
# A key's outcome not known yet: the form keeps it, so that a retry asks for that outcome instead of sending.
_UNSETTLED = (keyed_sends.IN_PROGRESS, keyed_sends.IN_DOUBT)
# A person's sentence for the key's own refusals (the use case words them for an API's caller).
_SENTENCES = {
    keyed_sends.IN_PROGRESS: "This message is still being sent; it will go once. Look at the thread in a moment.",
    keyed_sends.IN_DOUBT: "WhatsApp has this message and has not said yet whether it went out; it will not be sent "
                          "again. Look at the thread in a moment.",
    keyed_sends.DIFFERENT_REQUEST: "The message as first written was already sent (see the thread); send again to "
                                   "send this text as a new message.",
}


def new_key() -> str:
    """A key for one composed message: 128 random bits, URL-safe (well inside the field's 100 characters)."""
    return secrets.token_urlsafe(16)


def form_text(form, name: str) -> str:
    """A text area's value as typed: browsers send its line breaks as CRLF, which count as one character each
    where the box counted them (its maxlength) and where the use case counts them."""
    return (form.get(name) or "").replace("\r\n", "\n")


def key_of(form) -> dict[str, str]:
    """The form's key as its use case's argument (a form without one sends as before, unkeyed)."""
    key = (form.get(KEY_FIELD) or "").strip()
    return {KEY_FIELD: key} if key else {}


async def run_composed(use_case: UseCase, arguments: dict[str, Any]) -> Outcome:
    """The use case's outcome; while an earlier request with the same key is still under way (being prepared, or
    its message at the platform), that request's answer once it has one (or, after WAIT_FOR_FIRST_SECONDS, the
    refusal saying it is still under way)."""
    deps, caller = dependencies().use_case_deps, current_caller()
    outcome = await run(deps, caller, use_case, arguments, strict=False)
    with trio.move_on_after(WAIT_FOR_FIRST_SECONDS):
        while isinstance(outcome, Refused) and outcome.code in _UNSETTLED:
            await trio.sleep(LOOK_EVERY_SECONDS)
            outcome = await run(deps, caller, use_case, arguments, strict=False)
    return outcome


class Composer(msgspec.Struct, frozen=True):
    """What the composer shows: the refused form (`reply`, `note`, `template:<name>|<language>`) with what it
    held and why, and whether it keeps its key; every other form fresh."""

    form: str | None = None
    values: dict[str, Any] = {}
    error: str | None = None
    keeps_key: bool = False

    def key(self, form: str) -> str:
        if self.keeps_key and form == self.form and self.values.get(KEY_FIELD):
            return self.values[KEY_FIELD]
        return new_key()

    def value(self, form: str, name: str, default: Any = "") -> Any:
        return self.values.get(name, default) if form == self.form else default

    def error_for(self, form: str) -> str | None:
        return self.error if form == self.form else None


# The platform's refusals of a reply a member can act on, in a person's words, by errorCode.
_PLATFORM_SENTENCES = {
    131047: "The customer's 24-hour window has closed, so only a template can reach them now; your text is kept "
            "here.",
}
NOTHING_TO_SEND = "Write a reply or attach a file, then send."


def refused(form: str, values: dict[str, Any], outcome: Refused) -> Composer:
    """The composer after `form` was refused: what was typed kept, with a person's sentence."""
    sentence = _SENTENCES.get(outcome.code, outcome.message)
    if outcome.code == "send_failed" and isinstance(outcome.data, dict):
        sentence = _PLATFORM_SENTENCES.get(outcome.data.get("errorCode"), sentence)
    if form == "reply" and outcome.code == "invalid_text" and not str(values.get("text", "")).strip():
        sentence = NOTHING_TO_SEND
    return Composer(form=form, values=values, error=sentence, keeps_key=outcome.code in _UNSETTLED)


async def canned_choices() -> list[CannedResponse]:
    """The workspace's canned responses, for a member who may read them (none for others)."""
    caller = current_caller()
    if not canned_responses.LIST.allows(caller):
        return []
    listed = await run(dependencies().use_case_deps, caller, canned_responses.LIST, {})
    return listed.data.data if isinstance(listed, Done) else []


def fills(contact_name: str | None) -> dict[str, str]:
    """The placeholders' values in this chat, for the signed-in member."""
    session = g.get("session")
    return placeholders.values(contact_name, session.member_name if session is not None else None)


def with_canned(form, chosen: CannedResponse, contact_name: str | None) -> Composer:
    """The reply form as typed, the chosen response's text added after what was typed, its placeholders filled;
    the form keeps its key (nothing was sent with it: a retry of an earlier send stays a retry)."""
    typed = form_text(form, "text")
    text = placeholders.fill(chosen.text, fills(contact_name))
    values = {KEY_FIELD: (form.get(KEY_FIELD) or "").strip() or new_key(),
              "text": f"{typed.rstrip()}\n{text}" if typed.strip() else text}
    return Composer(form="reply", values=values, keeps_key=True)


def install(app: Quart) -> None:
    app.jinja_env.globals["canned_choices"] = canned_choices
    app.jinja_env.globals["canned_fills"] = fills
    app.jinja_env.globals["attachment_limits"] = attachments.LIMITS
