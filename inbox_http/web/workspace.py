"""The agent workspace: one screen with the list of a view, the open chat and its contact (`workspace.html`).

Its addresses: `/app/inbox?view=…&q=…&cursor=…` (no chat open) and `/app/chats/<phone>?view=…&q=…` (that chat
open beside the same list), with the list's filters beside the view (`&label=…&assignee=…&state=…&waiting=…&unread=
true`, `use_cases/inbox_views.ListFilter`), so that a filtered list can be bookmarked and shared; the list's links
keep the view, the filters and the search. A filter the list refuses (a label since deleted, a word for a number)
shows its sentence above the list, which is then the view unfiltered (400). A whole page is what a browser loads
and what every form answers without the script; with it (htmx), the script asks for the part it swaps, named by
the element's id (`fragments.wanted`): `list-pane` (a view, a search), `chat-pane` (a chat chosen in the list),
and after an action or a live event the parts it changed. The reads are the declared ones: the view's page
(`use_cases/inbox_views.py`) and the chat as a person works it (`use_cases/chat_view.py`), or a contact who has
no chat yet (`NewChat`: the pane with its card and the templates that start one).

An address naming a view that is not one of the member's (`?view=all`, an old bookmark, the queue without its
permission) shows the member's default view, with a sentence saying so, rather than an error page.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import msgspec
from quart import Response, request

from inbox_actors.live.event_stream import stream_position
from inbox_actors.use_cases import chat_view, inbox_views
from inbox_actors.use_cases.chat_view import ChatView, NewChat
from inbox_actors.use_cases.inbox_views import VIEW_TITLES, InboxPage
from inbox_actors.use_cases.outcomes import Done, Refused
from inbox_actors.use_cases.use_case import run
from inbox_http.dependencies import dependencies
from inbox_http.guard import current_caller
from inbox_http.web import fragments, list_tools
from inbox_http.web.composer import Composer
from inbox_http.web.pages import page, refused_page

TEMPLATE = "workspace.html"
_MAX_SEARCH = 200
# The list's filters as an address names them (their rules are the list's: `inbox_views.ListFilter`).
FILTER_FIELDS = ("label", "assignee", "team", "state", "waiting", "unread")
_MAX_FILTER = 100
# The chat's parts an action or a live event may change, each a block of the template with an element of that id.
HEAD, THREAD, COMPOSER, CONTACT, NOTICE = "chat_head", "thread", "composer", "contact", "notice"


class Place(msgspec.Struct, frozen=True):
    """Where the member is: the view (and search, and page of it) the list shows, and the chat open, if any."""

    view: str
    search: str
    cursor: str | None
    phone: str | None
    view_notice: str | None = None
    """Why the list shows another view than the address named."""
    filters: dict[str, str] = {}
    """The list's filters as the address gives them, unjudged (`FILTER_FIELDS`)."""
    select_all: bool = False
    """Every chat shown selected for a bulk action (the "Select all shown" link without the script)."""

    def query(self, **changes: str | None) -> str:
        """The view, filters and search as an address carries them (`cursor` only when asked)."""
        values = {"view": self.view, **self.filters, "q": self.search or None, **changes}
        return urlencode({name: value for name, value in values.items() if value})

    def view_url(self, view: str) -> str:
        """Another view under the same filters (no search: choosing a view ends one)."""
        return f"{self.here}?{self.query(view=view, q=None)}"

    @property
    def unfiltered_url(self) -> str:
        return f"{self.here}?{urlencode({'view': self.view})}"

    @property
    def here(self) -> str:
        return f"/app/chats/{self.phone}" if self.phone else "/app/inbox"

    def chat_url(self, phone: str) -> str:
        return f"/app/chats/{phone}?{self.query()}"

    @property
    def inbox_url(self) -> str:
        return f"/app/inbox?{self.query()}"

    @property
    def list_url(self) -> str:
        """What the script reads again when the list may have changed."""
        return f"/app/inbox/list?{self.query(cursor=self.cursor, chat=self.phone)}"


def place(phone: str | None = None) -> Place:
    """The place this request names; a member limited to their own chats starts with them, others with what waits
    for the team, and so does an address naming a view that is not theirs (with a notice). A filter left empty
    (the form's "any") is no filter."""
    caller = current_caller()
    views = inbox_views.views_for(caller)
    default = inbox_views.default_view(caller)
    named = request.args.get("view") or default.value
    view, notice = named, None
    if views and named not in {known.value for known in views}:
        view, notice = default.value, f"There is no view “{named[:40]}”: here is the {VIEW_TITLES[default]}."
    filters = {name: value[:_MAX_FILTER] for name in FILTER_FIELDS if (value := request.args.get(name, "").strip())}
    if filters.get("unread") in ("on", "false"):  # a checkbox's own value; unticked is no filter
        filters = {**filters, "unread": "true"} if filters["unread"] == "on" else \
            {name: value for name, value in filters.items() if name != "unread"}
    return Place(view=view, search=(request.args.get("q") or "")[:_MAX_SEARCH], cursor=request.args.get("cursor"),
                 phone=phone if phone is not None else request.args.get("chat"), view_notice=notice,
                 filters=filters, select_all=request.args.get("select") == "all")


class Listed(msgspec.Struct, frozen=True):
    """The list as read for a place: the page, where its links lead, and the sentence of filters it refused
    (the page is then the view unfiltered, shown with status 400)."""

    inbox: InboxPage
    where: Place
    refusal: str | None = None

    @property
    def status(self) -> int:
        return 400 if self.refusal else 200


async def read_list(where: Place) -> Listed | Refused:
    """The declared list read (`inbox_views.INBOX`) for this place, its fields as the address gave them."""
    outcome = await _run_list(where)
    if isinstance(outcome, Refused) and outcome.status == 400 and where.filters:
        unfiltered = msgspec.structs.replace(where, filters={}, cursor=None)
        again = await _run_list(unfiltered)
        return again if isinstance(again, Refused) else Listed(again.data, unfiltered, outcome.message)
    return outcome if isinstance(outcome, Refused) else Listed(outcome.data, where)


async def _run_list(where: Place) -> Done | Refused:
    arguments = {"view": where.view, **where.filters, "q": where.search or None, "cursor": where.cursor}
    return await run(dependencies().use_case_deps, current_caller(), inbox_views.INBOX,
                     {name: value for name, value in arguments.items() if value}, strict=False)


async def read_chat(phone: str, *, opening: bool) -> ChatView | NewChat | Refused:
    """The chat; `opening`: a person opens it now (a view recorded, its unread cleared). Its thread holds the
    newest messages the address asks for (`?thread=80`: "Earlier messages" followed; `chat_view.thread_size`),
    which the page's script keeps asking for in every read of the chat after it (app.js)."""
    shown = chat_view.thread_size(request.args.get("thread"))
    if opening:
        return await chat_view.open_chat_view(dependencies().use_case_deps, current_caller(), phone, shown)
    return await chat_view.chat_view(dependencies().use_case_deps, current_caller(), phone, shown=shown)


async def _list_context(asked: Place, listed: Listed, **tools: Any) -> dict[str, Any]:
    """`asked`: the place as the address named it (its filters as typed, for the filter form); `tools`: a bulk
    action's report or refusal (`list_tools.tools`)."""
    where, inbox = listed.where, listed.inbox
    return {"inbox": inbox, "titles": VIEW_TITLES, "where": where, "asked": asked, "filter_refusal": listed.refusal,
            "tools": await list_tools.tools(where, inbox, **tools),
            "more_url": f"{where.here}?{where.query(cursor=inbox.next_cursor)}" if inbox.next_cursor else None}


def _chat_context(where: Place, chat: ChatView | NewChat | None, *, notice: str | None = None,
                  refusal: str | None = None, composer: Composer | None = None, contact_refusal: str | None = None,
                  contact_conflict: bool = False, oob: bool = False) -> dict[str, Any]:
    """`refusal`: an action's sentence, above the chat; `composer`: a composed message refused, its text kept;
    `contact_refusal`: the card's, on the card; `oob`: parts swapped by their own ids. A contact without a chat is
    `new_chat`, never `chat`."""
    new_chat = chat if isinstance(chat, NewChat) else None
    return {"chat": None if new_chat else chat, "new_chat": new_chat, "where": where, "notice": notice,
            "refusal": refusal, "composer": composer or Composer(), "contact_refusal": contact_refusal,
            "contact_conflict": contact_conflict, "oob": oob}


async def whole_page(where: Place, chat: ChatView | NewChat | None, status: int = 200, *,
                     tools: dict[str, Any] | None = None, **pane: Any) -> Response:
    """The screen as a browser loads it: the list, and the chat if one is open."""
    since = await stream_position(dependencies().db)
    listed = await read_list(where)
    if isinstance(listed, Refused):
        return await refused_page(listed)
    context = await _list_context(where, listed, **(tools or {}))
    return await page(TEMPLATE, max(status, listed.status), live_since=since,
                      **{**context, **_chat_context(listed.where, chat, **pane)})


async def list_part(where: Place, block: str, status: int = 200, **tools: Any) -> Response:
    """The list pane (a view or a search chosen, a bulk action's answer) or the list's body (read again after a
    live event)."""
    listed = await read_list(where)
    if isinstance(listed, Refused):
        return await refused_page(listed)
    rendered = await fragments.block(TEMPLATE, block, **await _list_context(where, listed, **tools))
    return fragments.answer(rendered, status=max(status, listed.status))


async def chat_pane(where: Place, chat: ChatView | NewChat | None, **pane: Any) -> Response:
    """The chat pane alone (a chat chosen in the list, or none: closed, or gone from sight after an action), with
    the tab's title; it replaces the pane whichever element asked."""
    title = "Inbox" if chat is None else chat.name if isinstance(chat, NewChat) else chat.chat.contact_name
    response = fragments.answer(await fragments.block(TEMPLATE, "chat_pane", **_chat_context(where, chat, **pane)),
                                title=title)
    if fragments.wanted() != "chat-pane":
        # Only when another element asked: htmx looks a re-target up from the element that asked, and a list's link
        # that a live update replaced meanwhile finds no pane from where it is (an error, and the click lost).
        response.headers["HX-Retarget"] = "#chat-pane"
        response.headers["HX-Reswap"] = "outerHTML"
    return response


async def chat_parts(where: Place, chat: ChatView, parts: tuple[str, ...], status: int = 200,
                     trigger: str | None = None, **pane: Any) -> Response:
    """Parts of the open chat, each swapped by its own id (out of band)."""
    context = _chat_context(where, chat, oob=True, **pane)
    rendered = [await fragments.block(TEMPLATE, part, **context) for part in parts]
    return fragments.answer(*rendered, status=status, trigger=trigger)
