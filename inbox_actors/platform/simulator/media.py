"""The simulator's media shelf: the files simulated customers send and the files the business uploads
(`POST /{phone_number_id}/media`), each under a media id, for `GET /{media-id}` to answer where it is
(`MediaLocation`) and that URL the file, as Meta serves both. The newest MEDIA_SHELF files are kept, and at most
SHELF_BYTES in all: the oldest leave first."""

from __future__ import annotations

import base64
import binascii
import hashlib
import secrets
from collections import OrderedDict

import msgspec

MEDIA_SHELF = 1_000
SHELF_BYTES = 256 * 1024 * 1024
# The type a customer's file has when the control call names none.
DEFAULT_MIME_TYPES = {"image": "image/jpeg", "video": "video/mp4", "audio": "audio/ogg",
                      "document": "application/pdf", "sticker": "image/webp"}


class InvalidMedia(ValueError):
    """The file a control call gave is not base64."""


class StoredMedia(msgspec.Struct, frozen=True):
    mime_type: str
    content: bytes
    filename: str | None = None              # an upload's file name, as the multipart form gave it

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.content).hexdigest()


class MediaLocation(msgspec.Struct, frozen=True):
    """The Cloud API's answer to `GET /{media-id}`."""

    url: str
    mime_type: str
    file_size: int
    id: str
    messaging_product: str = "whatsapp"


class MediaShelf:
    """The media on the platform, by media id; the oldest leave past `capacity` files or `capacity_bytes`."""

    def __init__(self, capacity: int = MEDIA_SHELF, capacity_bytes: int = SHELF_BYTES) -> None:
        self._capacity, self._capacity_bytes = capacity, capacity_bytes
        self._items: OrderedDict[str, StoredMedia] = OrderedDict()
        self._bytes = 0

    def keep(self, kind: str, mime_type: str | None, content_base64: str | None) -> tuple[str, StoredMedia]:
        """A customer's file: a new media id and the file stored under it, the given one or a small made-up file of
        the kind."""
        if content_base64 is not None:
            try:
                content = base64.b64decode(content_base64, validate=True)
            except (binascii.Error, ValueError):
                raise InvalidMedia("content_base64 is not base64") from None
        else:
            content = f"simulated {kind} {secrets.token_hex(4)}\n".encode() * 64
        media = StoredMedia(mime_type or DEFAULT_MIME_TYPES.get(kind, "application/octet-stream"), content)
        return self.put(media), media

    def put(self, media: StoredMedia) -> str:
        """Stores `media` under a new media id, answered."""
        media_id = str(secrets.randbelow(10**15))
        self._items[media_id] = media
        self._bytes += len(media.content)
        while len(self._items) > self._capacity or (self._bytes > self._capacity_bytes and len(self._items) > 1):
            _, gone = self._items.popitem(last=False)
            self._bytes -= len(gone.content)
        return media_id

    def get(self, media_id: str) -> StoredMedia | None:
        return self._items.get(media_id)

    def location(self, media_id: str, base_url: str) -> MediaLocation | None:
        media = self._items.get(media_id)
        if media is None:
            return None
        return MediaLocation(url=f"{base_url}/simulator/media/{media_id}", mime_type=media.mime_type,
                             file_size=len(media.content), id=media_id)
