"""Media at the platform: a customer's, fetched from it, and a member's attachment, uploaded to it. The Cloud API's
`GET /{media-id}` answers a short-lived URL with the file's mime type and size, and a `GET` of that URL with the
access token answers the file; `POST /{phone_number_id}/media` (multipart: `file`, `type`, `messaging_product`)
takes a file and answers its media id, which a send then names (`SendRequest.media_id`).

An upload is bounded in time as a whole (`upload_seconds`), and its every outcome is a value: the media id, or a
`SendRefused` (Meta's error body, or the client's own "unreachable", "timeout" or "unexpected answer" as the send
client words them). It sends nothing to anyone, so an upload made twice (a retried form) costs only the platform's
storage. The file uploaded is kept in the cache below under its new id when small enough, so the thread that shows
it does not download it again; media the service sent is otherwise shown, as a customer's is, by its id.

The files are streamed to the caller, never held whole, except small ones: a file of at most `item_bytes` is
read once and kept in a least-recently-used cache of at most `cache_bytes` in all, since an agent opening a chat
asks for its pictures again and again. A file's size, which the chat's page shows beside a document's name, is
in the platform's answer to where the file is; sizes once learnt are kept (`SIZES_KEPT`), as a file never
changes. Media has a client of its own, with a few connections, so a large download never holds a connection a
send is waiting for. Every failure is `MediaUnavailable` with a sentence;
a media id the platform does not know is `MediaGone`.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx
import msgspec
import trio

from inbox_actors.outbound_http.verified_tls import verified_context
from inbox_actors.platform.client import (
    TITLE_TIMEOUT,
    TITLE_UNEXPECTED,
    TITLE_UNREACHABLE,
    UNREACHABLE_CODE,
    UNREACHABLE_MESSAGE,
)
from inbox_actors.platform.cloud_api import MESSAGING_PRODUCT, UnexpectedAnswer, decode_upload_answer
from inbox_actors.platform.payloads import SendRefused

CACHE_BYTES = 64 * 1024 * 1024
ITEM_BYTES = 4 * 1024 * 1024
MAX_CONNECTIONS = 4
SIZES_KEPT = 10_000
# An upload's whole time at the platform, connecting included (a 7 MiB file at 1 Mbit/s takes about 60 s).
UPLOAD_SECONDS = 90.0
_CHUNK = 64 * 1024


class MediaUnavailable(Exception):
    """The platform could not be asked, or did not answer with the file."""


class MediaGone(MediaUnavailable):
    """The platform knows no such media (it keeps a customer's media for a limited time)."""


class _Location(msgspec.Struct, frozen=True):
    url: str
    mime_type: str | None = None
    file_size: int | None = None


@dataclass(frozen=True)
class MediaStream:
    mime_type: str
    size: int | None
    chunks: AsyncIterator[bytes]


class MediaFetcher:
    def __init__(self, api_url: str, access_token: str, *, cache_bytes: int = CACHE_BYTES,
                 item_bytes: int = ITEM_BYTES, timeout: float = 30.0, upload_seconds: float = UPLOAD_SECONDS) -> None:
        self._api_url = api_url.rstrip("/")
        self._upload_seconds = upload_seconds
        self._http = httpx.AsyncClient(
            timeout=timeout, verify=verified_context(), headers={"Authorization": f"Bearer {access_token}"},
            limits=httpx.Limits(max_connections=MAX_CONNECTIONS, max_keepalive_connections=MAX_CONNECTIONS))
        self._cache: OrderedDict[str, tuple[str, bytes]] = OrderedDict()
        self._cached_bytes = 0
        self._cache_bytes, self._item_bytes = cache_bytes, item_bytes
        self._sizes: OrderedDict[str, int] = OrderedDict()
        self.downloads = 0

    async def aclose(self) -> None:
        await self._http.aclose()

    async def open(self, media_id: str, mime_type: str | None) -> MediaStream:
        """The file of `media_id`; `mime_type` is what the message said, used when the platform says none."""
        cached = self._cache.get(media_id)
        if cached is not None:
            self._cache.move_to_end(media_id)
            return MediaStream(cached[0], len(cached[1]), _once(cached[1]))
        location = await self._locate(media_id)
        self._keep_size(media_id, location.file_size)
        kind = location.mime_type or mime_type or "application/octet-stream"
        if location.file_size is not None and location.file_size <= self._item_bytes:
            content = await self._read(location.url)
            self._keep(media_id, kind, content)
            return MediaStream(kind, len(content), _once(content))
        return MediaStream(kind, location.file_size, self._stream(location.url))

    async def size(self, media_id: str) -> int | None:
        """The file's size in bytes, as the platform tells where it is; None when it cannot say now."""
        known = self._sizes.get(media_id)
        if known is not None:
            return known
        try:
            location = await self._locate(media_id)
        except MediaUnavailable:
            return None
        self._keep_size(media_id, location.file_size)
        return location.file_size

    async def upload(self, phone_number_id: str, content: bytes, mime_type: str, filename: str) -> str | SendRefused:
        """The media id the platform gave `content`, or its refusal (never raises for the network or the
        platform)."""
        url = f"{self._api_url}/{phone_number_id}/media"
        with trio.move_on_after(self._upload_seconds):
            try:
                response = await self._http.post(url, data={"messaging_product": MESSAGING_PRODUCT, "type": mime_type},
                                                 files={"file": (filename, content, mime_type)})
            except trio.Cancelled:
                raise
            except httpx.HTTPError as err:
                return _not_uploaded(TITLE_UNREACHABLE, f"{url}: {type(err).__name__}: {err}")
            try:
                outcome = decode_upload_answer(response.status_code, response.content)
            except UnexpectedAnswer as err:
                return _not_uploaded(TITLE_UNEXPECTED, str(err), response.status_code)
            if isinstance(outcome, str):
                self._keep_size(outcome, len(content))
                self._keep(outcome, mime_type, content)
            return outcome
        return _not_uploaded(TITLE_TIMEOUT, f"no answer from {url} within {self._upload_seconds:g}s")

    def _keep_size(self, media_id: str, size: int | None) -> None:
        if size is None:
            return
        self._sizes[media_id] = size
        self._sizes.move_to_end(media_id)
        while len(self._sizes) > SIZES_KEPT:
            self._sizes.popitem(last=False)

    async def _locate(self, media_id: str) -> _Location:
        try:
            response = await self._http.get(f"{self._api_url}/{media_id}")
        except httpx.HTTPError as err:
            raise MediaUnavailable(f"the platform could not be asked for the media ({type(err).__name__})") from None
        if response.status_code in (400, 404):
            raise MediaGone("the platform no longer has this media")
        if response.status_code != 200:
            raise MediaUnavailable(f"the platform answered HTTP {response.status_code} for the media")
        try:
            return msgspec.json.decode(response.content, type=_Location)
        except msgspec.DecodeError:
            raise MediaUnavailable("the platform's answer for the media named no file") from None

    async def _read(self, url: str) -> bytes:
        parts = [chunk async for chunk in self._stream(url)]
        return b"".join(parts)

    async def _stream(self, url: str) -> AsyncIterator[bytes]:
        self.downloads += 1
        try:
            async with self._http.stream("GET", url) as response:
                if response.status_code != 200:
                    raise MediaUnavailable(f"the platform answered HTTP {response.status_code} for the file")
                async for chunk in response.aiter_bytes(_CHUNK):
                    yield chunk
        except trio.Cancelled:
            raise
        except httpx.HTTPError as err:
            raise MediaUnavailable(f"the file could not be downloaded ({type(err).__name__})") from None

    def _keep(self, media_id: str, mime_type: str, content: bytes) -> None:
        if len(content) > self._item_bytes:
            return
        self._cache[media_id] = (mime_type, content)
        self._cached_bytes += len(content)
        while self._cached_bytes > self._cache_bytes:
            _, (_, evicted) = self._cache.popitem(last=False)
            self._cached_bytes -= len(evicted)


async def _once(content: bytes) -> AsyncIterator[bytes]:
    yield content


def _not_uploaded(title: str, details: str, http_status: int = 0) -> SendRefused:
    return SendRefused(message=UNREACHABLE_MESSAGE, code=UNREACHABLE_CODE, title=title, details=details,
                       http_status=http_status)
