"""The simulated platform's media endpoints, on its media shelf: where a file is (`GET /{media-id}`), the file at
that URL, and the business's uploads (`POST /{phone_number_id}/media`), each judged as Meta judges them
(`rules.upload_refusal`). Every call needs the access token, as the platform's do."""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from inbox_actors.platform.cloud_api import MESSAGING_PRODUCT
from inbox_actors.platform.simulator.media import MediaLocation, MediaShelf, StoredMedia
from inbox_actors.platform.simulator.rules import (
    Refusal,
    invalid_token,
    missing_parameter,
    unknown_path,
    upload_refusal,
)
from inbox_actors.platform.simulator.state import SimulatorStats


class UploadForm(msgspec.Struct, frozen=True):
    """An upload's multipart form as it arrived: its text fields and its `file` part (None when it has none)."""

    messaging_product: str | None
    type: str | None
    file: StoredMedia | None                 # the part's bytes, its own content type and its file name


class Uploaded(msgspec.Struct, frozen=True):
    id: str


class MediaDesk:
    def __init__(self, shelf: MediaShelf, stats: SimulatorStats, authorized: Callable[[str | None], bool],
                 base_url: Callable[[], str | None]) -> None:
        self._shelf, self._stats, self._authorized, self._base_url = shelf, stats, authorized, base_url

    def location(self, media_id: str, authorization: str | None) -> MediaLocation | Refusal:
        """`GET /{media-id}`: where the file is (on this simulator), its type and size. A path that names no media
        is an unknown path, as any other is."""
        base_url = self._base_url()
        location = None if base_url is None else self._shelf.location(media_id, base_url)
        if location is None:
            return unknown_path(f"/{media_id}")
        if not self._authorized(authorization):
            return invalid_token()
        return location

    def file(self, media_id: str, authorization: str | None) -> StoredMedia | Refusal:
        """The file at a media location."""
        if not self._authorized(authorization):
            return invalid_token()
        media = self._shelf.get(media_id)
        if media is None:
            return unknown_path(f"/simulator/media/{media_id}")
        self._stats.media_downloads += 1
        return media

    def upload(self, authorization: str | None, form: UploadForm) -> Uploaded | Refusal:
        """`POST /{phone_number_id}/media`: the file kept on the shelf under a new media id, or Meta's refusal. The
        file's type is its part's own (the `type` field is required but, as at Meta, does not override it)."""
        outcome = self._judge(authorization, form)
        if isinstance(outcome, Refusal):
            key = str(outcome.error.code)
            self._stats.uploads_refused[key] = self._stats.uploads_refused.get(key, 0) + 1
            return outcome
        self._stats.media_uploads += 1
        return Uploaded(id=self._shelf.put(outcome))

    def _judge(self, authorization: str | None, form: UploadForm) -> StoredMedia | Refusal:
        if not self._authorized(authorization):
            return invalid_token()
        if form.messaging_product != MESSAGING_PRODUCT:
            return missing_parameter("messaging_product")
        if form.file is None:
            return missing_parameter("file")
        if not form.type:
            return missing_parameter("type")
        refusal = upload_refusal(form.file.mime_type, len(form.file.content))
        return form.file if refusal is None else refusal
