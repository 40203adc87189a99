"""Who may open the API keys pages: key management's admin rule (`AdminRule`: *view* for admins and members with
the settings permission, *manage* for admins), asked of the auth ladder with the signed-in member exactly as the
REST guard asks it for a dashboard session, so the rule is stated once (`domain/auth_ladder.py`).

A module of its own because two others ask it: the keys pages, and the header's list of sections (`pages.py`),
which the keys pages import.
"""

from __future__ import annotations

from inbox_actors.access.sessions import Session
from inbox_actors.domain.auth_ladder import AdminRule, Refusal, check_session_admin
from inbox_actors.use_cases.caller import Caller


def key_admin_refusal(session: Session, rule: AdminRule) -> Refusal | None:
    """None when the member may do what `rule` covers; otherwise the ladder's refusal (status, sentence)."""
    return check_session_admin(session.member_status, session.role, session.permissions, rule)


def may_view_keys(caller: Caller, session: Session) -> bool:
    """Whether the key list opens for this member (a section of the header: `(caller, session) -> bool`)."""
    return key_admin_refusal(session, AdminRule.VIEW) is None
