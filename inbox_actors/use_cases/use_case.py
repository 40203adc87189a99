"""A use case, declared once, and the one runner every front door calls it through.

A declaration names the use case, its arguments (a msgspec struct: the one place its field rules live, with the
code and sentence a broken rule answers), the permissions its caller needs, whether it reads or writes, and its
handler, which answers one outcome type: `Done` or `Refused`.

    CLAIM = UseCase("claim_conversation", OneChat, permissions.CHAT_ACTIONS, Kind.WRITE, _claim)

`run` checks the caller's permission, then decodes the arguments into the struct, then runs the handler (a read's
query parameter it cannot take, `InvalidParameter`, and a chat the caller may not see, `ChatNotFound`, are refused
here for every read); REST
routes, web forms, MCP tools, connector actions and the CLI bind a URL, a form, a tool name or a command to a
declaration and translate the outcome, and a page that offers an action asks `allows` of the same declaration.
The CLI acts as the operator (`Caller.operator`), whom no permission check stops, through the same runner.

Failures of the service itself (an actor that failed, the database gone) are not outcomes: they propagate, and
each door answers them as it answers any such failure (REST's 503, MCP's "retry shortly").
"""

from __future__ import annotations

import enum
import re
import typing
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import msgspec

from inbox_actors.domain import auth_ladder
from inbox_actors.domain import scopes as scope_rules
from inbox_actors.domain.auth_ladder import AdminRule
from inbox_actors.paging.parameters import InvalidParameter
from inbox_actors.reporting.chat_lookup import ChatNotFound
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.outcomes import Done, Outcome, Reason, Refused, reason_of_status

Arguments = TypeVar("Arguments", bound=msgspec.Struct)

# A field's rule broken, as msgspec names the field: "... - at `$.reason`" or "... - at `$.tags[3]`".
_FIELD = re.compile(r" - at `\$\.([A-Za-z_][A-Za-z0-9_]*)")


class Kind(str, enum.Enum):
    READ = "read"
    WRITE = "write"


class Rule(msgspec.Struct, frozen=True):
    """What a field's broken rule answers: a stable code and a sentence a person can act on, and its status (a
    phone that names no chat is "no such chat", 404). It rides on the field's `msgspec.Meta(extra=...)` (see
    `rule`), next to the constraints it words; a field left out is answered `invalid_arguments`."""

    code: str
    sentence: str
    status: int = 400


def rule(code: str, sentence: str, status: int = 400) -> dict[str, Rule]:
    """The `extra` of a field's `msgspec.Meta`: `Meta(max_length=500, extra=rule("invalid_reason", "…"))`."""
    return {"rule": Rule(code, sentence, status)}


@dataclass(frozen=True)
class UseCase(Generic[Arguments]):
    name: str
    arguments: type[Arguments]
    permissions: tuple[str, ...]
    """The caller needs any one of these; for a read, a permission's `:read` variant is enough."""
    kind: Kind
    handler: Callable[[UseCaseDeps, Caller, Arguments], Awaitable[Outcome]]
    admin: AdminRule | None = None
    """Key management's rule instead of permissions (the spec's auth ladder): admins, or for *view* members with
    the settings permission too."""

    @property
    def method(self) -> str:
        """The HTTP method the auth ladder judges a permission by (a read is a GET)."""
        return "GET" if self.kind is Kind.READ else "POST"

    def allows(self, caller: Caller) -> bool:
        """Whether the caller may run this use case: what a page asks before it offers the action."""
        return self.refusal_for(caller) is None

    def refusal_for(self, caller: Caller) -> Refused | None:
        """Why the caller may not run it, worded for whoever reads it; None when it may."""
        if caller.is_operator:
            return None
        if self.admin is not None:
            refusal = auth_ladder.check_session_admin(caller.status, caller.role, caller.permissions, self.admin)
            return None if refusal is None else Refused(Reason.PERMISSION, refusal.message or refusal.error,
                                                        refusal.status, refusal.error)
        if caller.may(self.permissions, self.method):
            return None
        return Refused(Reason.PERMISSION, f"Permission denied: {self.name} needs the {self.needed()} permission, "
                       f"which {caller.who} does not have.", 403, "permission_denied")

    def needed(self) -> str:
        """The permissions it needs, as a refusal names them."""
        if self.admin is not None:
            return "admin" if self.admin is AdminRule.MANAGE else "admin or settings"
        return " or ".join(f"{p}:read" if self.kind is Kind.READ and scope_rules.SCOPES.get(p) else p
                           for p in self.permissions)


async def run(deps: UseCaseDeps, caller: Caller, use_case: UseCase[Arguments], arguments: Mapping[str, Any], *,
              strict: bool = True) -> Outcome:
    """The use case's outcome for `caller`: refused for a missing permission or arguments its struct does not
    take, else what its handler answers. Not `strict` (a web form, which can send only text): "12" or "true"
    stand for the value they name."""
    if (refused := use_case.refusal_for(caller)) is not None:
        return refused
    parsed = decode_arguments(use_case.arguments, arguments, strict=strict)
    if isinstance(parsed, Refused):
        return parsed
    try:
        return await use_case.handler(deps, caller, parsed)
    except InvalidParameter as err:  # a read's query parameter it cannot take, in the read's own words
        return Refused(Reason.INVALID, err.message, 400, err.code)
    except ChatNotFound:  # a read of a chat the caller may not see
        return Refused(Reason.NOT_FOUND, "No such chat in this workspace.", 404, "not_found")


def decode_arguments(kind: type[Arguments], arguments: Mapping[str, Any], *,
                     strict: bool = True) -> Arguments | Refused:
    """`arguments` as the struct, or the refusal of the first rule they break: the field's own code and
    sentence where it declares them (`rule`), else `invalid_arguments` with msgspec's account of it."""
    try:
        return msgspec.convert(arguments, type=kind, strict=strict)
    except msgspec.ValidationError as err:
        return argument_refusal(kind, str(err))


def argument_refusal(kind: type, error: str) -> Refused:
    found = _FIELD.search(error)
    declared = field_rules(kind).get(found.group(1)) if found else None
    if declared is not None:
        return Refused(reason_of_status(declared.status), declared.sentence, declared.status, declared.code)
    sentence = error if error.endswith(".") else f"{error}."
    return Refused(Reason.INVALID, f"Invalid arguments: {sentence}", 400, "invalid_arguments")


def field_rules(kind: type) -> dict[str, Rule]:
    """Each field's declared `Rule`, found on its `Meta(extra=...)`, through `| None` and `list[...]`."""
    cached = _RULES.get(kind)
    if cached is None:
        hints = typing.get_type_hints(kind, include_extras=True)
        cached = _RULES[kind] = {name: found for name, hint in hints.items()
                                 if (found := _rule_in(hint)) is not None}
    return cached


_RULES: dict[type, dict[str, Rule]] = {}


def _rule_in(hint: Any) -> Rule | None:
    if typing.get_origin(hint) is typing.Annotated:
        for meta in hint.__metadata__:
            if isinstance(meta, msgspec.Meta) and meta.extra and isinstance(meta.extra.get("rule"), Rule):
                return meta.extra["rule"]
        hint = typing.get_args(hint)[0]
    for inner in typing.get_args(hint):
        if (found := _rule_in(inner)) is not None:
            return found
    return None


def done(value: Any, summary: str | None = None) -> Outcome:
    """A handler's answer: a `Refused` as it is, anything else as what was done."""
    return value if isinstance(value, Refused) else Done(value, summary)
