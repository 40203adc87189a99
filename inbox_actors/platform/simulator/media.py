"""The media simulated customers send, kept for the service to download as it would from Meta: `GET /{media-id}`
answers where the file is (`MediaLocation`), and that URL answers the file. The last MEDIA_SHELF files are kept."""

from __future__ import annotations

import base64
import binascii
import secrets
from collections import OrderedDict

import msgspec

MEDIA_SHELF = 1_000
# The type a customer's file has when the control call names none.
DEFAULT_MIME_TYPES = {"image": "image/jpeg", "video": "video/mp4", "audio": "audio/ogg",
                      "document": "application/pdf", "sticker": "image/webp"}


class InvalidMedia(ValueError):
    """The file a control call gave is not base64."""


class StoredMedia(msgspec.Struct, frozen=True):
    mime_type: str
    content: bytes


class MediaLocation(msgspec.Struct, frozen=True):
    """The Cloud API's answer to `GET /{media-id}`."""

    url: str
    mime_type: str
    file_size: int
    id: str
    messaging_product: str = "whatsapp"


class MediaShelf:
    """The media customers sent, by media id; the oldest leave past `capacity`."""

    def __init__(self, capacity: int = MEDIA_SHELF) -> None:
        self._capacity = capacity
        self._items: OrderedDict[str, StoredMedia] = OrderedDict()

    def keep(self, kind: str, mime_type: str | None, content_base64: str | None) -> tuple[str, StoredMedia]:
        """A new media id and the file stored under it: the given one, or a small made-up file of the kind."""
        media_id = str(secrets.randbelow(10**15))
        if content_base64 is not None:
            try:
                content = base64.b64decode(content_base64, validate=True)
            except (binascii.Error, ValueError):
                raise InvalidMedia("content_base64 is not base64") from None
        else:
            content = f"simulated {kind} {media_id}\n".encode() * 64
        media = StoredMedia(mime_type or DEFAULT_MIME_TYPES.get(kind, "application/octet-stream"), content)
        self._items[media_id] = media
        while len(self._items) > self._capacity:
            self._items.popitem(last=False)
        return media_id, media

    def get(self, media_id: str) -> StoredMedia | None:
        return self._items.get(media_id)

    def location(self, media_id: str, base_url: str) -> MediaLocation | None:
        media = self._items.get(media_id)
        if media is None:
            return None
        return MediaLocation(url=f"{base_url}/simulator/media/{media_id}", mime_type=media.mime_type,
                             file_size=len(media.content), id=media_id)
