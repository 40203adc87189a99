"""What the workspace's list offers beside its chats: the filter form's choices (the workspace's labels, its members,
its teams),
the member's saved views, and the bulk form (its key, the members and labels it can act with, the report of the
last bulk action). Each read is a declared use case, asked only when the member may run it; the list's template
shows only what these allow (`workspace.html`, block `list_pane`).
"""

from __future__ import annotations

from collections import Counter
from typing import Any
from urllib.parse import urlencode

import msgspec

from inbox_actors.domain.member_ref import MemberRef
from inbox_actors.domain.team_ref import TeamRef
from inbox_actors.use_cases import bulk_actions, saved_views, team, teams
from inbox_actors.use_cases.bulk_actions import BulkReport
from inbox_actors.use_cases.inbox_views import InboxPage, default_view
from inbox_actors.use_cases.outcomes import Done
from inbox_actors.use_cases.saved_views import SavedView
from inbox_actors.use_cases.use_case import run
from inbox_http.dependencies import dependencies
from inbox_http.guard import current_caller
from inbox_http.web import composer

# What the bulk form's snooze offers: hours from when it runs, or none for "until the customer writes" (the one
# chat's snooze form offers the same).
SNOOZE_CHOICES = {"1h": 1, "4h": 4, "24h": 24, "reply": None}
_DONE_WORDS = {"assign": "assigned", "label": "labelled", "snooze": "snoozed", "resolve": "resolved"}


class SavedLink(msgspec.Struct, frozen=True):
    view: SavedView
    query: str
    """Its view and filters as an address's query (`?view=open&label=VIP`), for whichever page the list is on."""
    current: bool


class ListTools(msgspec.Struct, frozen=True):
    members: list[MemberRef]
    """Active members: whom the assignee filter can name and a selection can be assigned to."""
    teams: list[TeamRef]
    """The workspace's teams: whose queue the team filter can name."""
    saved: list[SavedLink]
    may_save: bool
    may_bulk: bool
    bulk_key: str
    """The bulk form's idempotency key: a double click, a retry, acts once (`bulk_actions`)."""
    report: BulkReport | None = None
    bulk_refusal: str | None = None
    saved_refusal: str | None = None
    saved_name: str = ""
    """What was typed in the save form, kept when it was refused."""

    @property
    def current_saved(self) -> SavedLink | None:
        return next((link for link in self.saved if link.current), None)

    @property
    def summary(self) -> str | None:
        """The report in a sentence: "3 resolved; 1 refused: the chat is with the bot; ..."."""
        if self.report is None:
            return None
        report = self.report
        said = [f"{report.done} {_DONE_WORDS.get(report.action, 'done')}"]
        if report.refused:
            reasons = Counter(result.message for result in report.results if not result.done)
            only = next(iter(reasons)) if len(reasons) == 1 else None
            said.append(f"{report.refused} refused" + (f": {only}" if only else " (below, with why)"))
        return "; ".join(said) + ("" if said[-1].endswith(".") else ".")


def saved_query(view: SavedView, caller_default: str) -> str:
    """A saved view's view and filters as the list's address names them."""
    filters = view.filters
    return urlencode({"view": filters.view.value if filters.view else caller_default, **filters.fields()})


def saved_url(view: SavedView, caller_default: str) -> str:
    """The inbox's address of a saved view."""
    return f"/app/inbox?{saved_query(view, caller_default)}"


async def tools(where: Any, inbox: InboxPage, *, report: BulkReport | None = None,
                bulk_refusal: str | None = None, saved_refusal: str | None = None, saved_name: str = "") -> ListTools:
    """What the list pane offers this member at `where` (a `workspace.Place`)."""
    deps, caller = dependencies().use_case_deps, current_caller()
    members: list[MemberRef] = []
    if team.MEMBER_NAMES.allows(caller):
        named = await run(deps, caller, team.MEMBER_NAMES, {})
        if isinstance(named, Done):
            members = [MemberRef(m.user_id, m.name) for m in named.data if m.status == "active"]
    queues: list[TeamRef] = []
    if teams.LIST.allows(caller):
        listed = await run(deps, caller, teams.LIST, {})
        if isinstance(listed, Done):
            queues = [TeamRef(t.id, t.name) for t in listed.data.data]
    saved: list[SavedLink] = []
    if saved_views.LIST.allows(caller):
        default = default_view(caller).value
        here = {"view": where.view, **where.filters}
        for view in await saved_views.saved_views(deps, caller):
            wanted = {"view": view.filters.view.value if view.filters.view else default, **view.filters.fields()}
            saved.append(SavedLink(view, saved_query(view, default), _same(wanted, here) and not where.search))
    return ListTools(members=members, teams=queues, saved=saved, may_save=saved_views.SAVE.allows(caller),
                     may_bulk=bulk_actions.RESOLVE.allows(caller), bulk_key=composer.new_key(), report=report,
                     bulk_refusal=bulk_refusal, saved_refusal=saved_refusal, saved_name=saved_name)


def _same(saved: dict[str, str], here: dict[str, str]) -> bool:
    return {name: value.lower() for name, value in saved.items()} == \
        {name: value.lower() for name, value in here.items()}
