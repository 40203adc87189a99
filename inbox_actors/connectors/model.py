"""The automation connectors' shared types: the two platforms, what a connection, a hook and a trigger look like,
and the refusals the routes answer in the stable-code convention."""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Any

import msgspec


class Platform(str, enum.Enum):
    """The two automation platforms; each has its prefix, `/api/zapier` and `/api/make`, and its field shapes."""

    ZAPIER = "zapier"
    MAKE = "make"

    @property
    def title(self) -> str:
        return "Zapier" if self is Platform.ZAPIER else "Make"


class ConnectorRefusal(msgspec.Struct, frozen=True):
    """Why a connector call changed nothing: the HTTP status, the stable code, a sentence."""

    status: int
    code: str
    message: str
    details: Any = None


class WorkspaceRef(msgspec.Struct, frozen=True):
    id: int
    name: str
    plan: str


class KeyRef(msgspec.Struct, frozen=True):
    id: int
    name: str
    scopes: list[str]


class MemberRef(msgspec.Struct, frozen=True):
    user_id: int
    name: str
    email: str | None
    role: str


class Connection(msgspec.Struct, frozen=True):
    """The authentication test's answer (`GET …/me`): `label` is what the platform shows as the connection."""

    platform: str
    label: str
    workspace: WorkspaceRef
    key: KeyRef
    member: MemberRef
    events: list[str]
    """The trigger events the plan offers."""


class HookView(msgspec.Struct, frozen=True):
    """A REST hook subscription (never its secret)."""

    id: int
    event: str
    target_url: str
    key_id: int
    key_name: str
    created_at: datetime


class IssuedHook(HookView, frozen=True):
    """The answer to subscribing: the hook and its signing secret, shown this once."""

    secret: str


class HookList(msgspec.Struct, frozen=True):
    data: list[HookView]


class Trigger(msgspec.Struct, frozen=True):
    """One trigger of the catalog: an outbound webhook event under a name a platform's user recognises."""

    key: str
    """The event's name: what `POST …/hooks` and `…/triggers/{key}/samples` take."""
    label: str
    noun: str
    description: str
    plan: str
    """"any" (Growth and Scale) or "scale"."""
    available: bool
    """Whether this workspace's plan offers it."""
    sample: dict[str, Any]
    """The documented example item (what a delivery's body and a sample look like)."""


class TriggerList(msgspec.Struct, frozen=True):
    data: list[Trigger]
