"""The service's link to the messaging platform: secrets, the send client, the media fetcher, and which workspace
owns a number.

With `WHATSAPP_API_URL` unset the built-in simulator is the platform; its address is known only once it
listens, so the link is made first and the client attached when the simulator is up (`attach`). Sends made
before that are refused like an unreachable platform.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field

from inbox_actors.monitoring.metrics import ServiceMetrics
from inbox_actors.platform.client import (
    TITLE_TIMEOUT,
    TITLE_UNEXPECTED,
    TITLE_UNREACHABLE,
    UNREACHABLE_CODE,
    UNREACHABLE_MESSAGE,
    CloudApiClient,
)
from inbox_actors.platform.media import MediaFetcher
from inbox_actors.platform.payloads import SendAccepted, SendRefused, SendRequest
from persistence.database import Database
from persistence.queries import workspaces as workspace_queries


@dataclass
class PlatformLink:
    app_secret: str
    verify_token: str
    access_token: str
    api_url: str | None = None
    client: CloudApiClient | None = None
    media: MediaFetcher | None = None        # customers' media, fetched from the platform (platform/media.py)
    simulator_url: str | None = None         # the built-in simulator's address, when it is the platform
    metrics: ServiceMetrics | None = None    # where each send's outcome and time are counted
    # phone_number_id -> workspace id; numbers never move between workspaces, so entries stay true.
    _numbers: dict[str, int] = field(default_factory=dict)

    @classmethod
    def with_secrets(cls, *, app_secret: str | None, verify_token: str | None, access_token: str | None,
                     api_url: str | None) -> "PlatformLink":
        """The configured secrets; random ones where none is configured (the in-process simulator, the only
        platform that then needs them, learns them from the link)."""
        return cls(
            app_secret=app_secret or secrets.token_hex(32),
            verify_token=verify_token or secrets.token_urlsafe(24),
            access_token=access_token or secrets.token_urlsafe(32),
            api_url=api_url,
        )

    def attach(self, api_url: str) -> None:
        self.api_url = api_url.rstrip("/")
        self.client = CloudApiClient(self.api_url, self.access_token)
        self.media = MediaFetcher(self.api_url, self.access_token)

    async def open_ahead(self) -> None:
        """The connections of the platform's sends, opened before the first sends need them
        (CloudApiClient.open_ahead)."""
        if self.client is not None:
            await self.client.open_ahead()

    async def aclose(self) -> None:
        if self.client is not None:
            await self.client.aclose()
        if self.media is not None:
            await self.media.aclose()

    async def send(self, phone_number_id: str, request: SendRequest) -> SendAccepted | SendRefused:
        started = time.perf_counter()
        if self.client is None:
            result: SendAccepted | SendRefused = SendRefused(
                message=UNREACHABLE_MESSAGE, code=UNREACHABLE_CODE, title=TITLE_UNREACHABLE,
                details="the messaging platform is not connected yet", http_status=0)
        else:
            result = await self.client.send(phone_number_id, request)
        if self.metrics is not None:
            outcome = send_outcome(result)
            self.metrics.send_answered(outcome, result.code if outcome == "refused" else None,
                                       time.perf_counter() - started)
        return result

    async def workspace_of(self, db: Database, phone_number_id: str) -> int | None:
        workspace_id = self._numbers.get(phone_number_id)
        if workspace_id is None:
            workspace_id = await workspace_queries.find_workspace_by_number(db, phone_number_id)
            if workspace_id is not None:
                self._numbers[phone_number_id] = workspace_id
        return workspace_id


# The client's own refusals when the platform gave no answer of its own (client.py), by their title.
_NO_ANSWER = {TITLE_TIMEOUT: "timeout", TITLE_UNREACHABLE: "unreachable", TITLE_UNEXPECTED: "unexpected_answer"}


def send_outcome(result: SendAccepted | SendRefused) -> str:
    """accepted; refused (the platform's own error, with its code); or timeout, unreachable, unexpected_answer."""
    if isinstance(result, SendAccepted):
        return "accepted"
    if result.code == UNREACHABLE_CODE and result.title in _NO_ANSWER:
        return _NO_ANSWER[result.title]
    return "refused"
