"""The files the WhatsApp Cloud API takes in a media message, as Meta lists them: each message kind's mime types and
the largest file Meta takes of it. Pure; both sides use it: the simulator judges an upload by it (as the platform
does), and the service judges an attachment by it before uploading, within a bound of its own
(`use_cases/attachments.py`).

Meta's limits are in MB, which Meta counts as MiB: images 5, video and audio 16, documents 100. The platform's
upload endpoint also takes image/webp (stickers) and audio/opus, which no media message of ours sends.
"""

from __future__ import annotations

from pathlib import PurePosixPath

MIB = 1024 * 1024

# Message kind -> the mime types Meta takes for it, in Meta's order.
KINDS: dict[str, tuple[str, ...]] = {
    "image": ("image/jpeg", "image/png"),
    "video": ("video/mp4", "video/3gpp"),
    "audio": ("audio/aac", "audio/amr", "audio/mpeg", "audio/mp4", "audio/ogg"),
    "document": ("application/pdf", "text/plain", "application/msword",
                 "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
                 "application/vnd.ms-excel", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
                 "application/vnd.ms-powerpoint",
                 "application/vnd.openxmlformats-officedocument.presentationml.presentation"),
}
# The largest file of each kind Meta takes.
META_LIMITS = {"image": 5 * MIB, "video": 16 * MIB, "audio": 16 * MIB, "document": 100 * MIB}
# What the upload endpoint takes beyond the message kinds (an animated sticker, a voice note), with its limit.
UPLOAD_ONLY_LIMITS = {"image/webp": 500 * 1024, "audio/opus": 16 * MIB}
# Every type the upload endpoint takes, in the order Meta's refusal lists them.
UPLOADABLE = ("audio/aac", "audio/mp4", "audio/mpeg", "audio/amr", "audio/ogg", "audio/opus",
              "application/vnd.ms-powerpoint", "application/msword",
              "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
              "application/vnd.openxmlformats-officedocument.presentationml.presentation",
              "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "application/pdf", "text/plain",
              "application/vnd.ms-excel", "image/jpeg", "image/png", "image/webp", "video/mp4", "video/3gpp")

# A file's name ending -> its type, for a browser that names none or a vendor's variant (audio/x-m4a).
_BY_SUFFIX = {
    ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".png": "image/png", ".mp4": "video/mp4", ".3gp": "video/3gpp",
    ".aac": "audio/aac", ".amr": "audio/amr", ".mp3": "audio/mpeg", ".m4a": "audio/mp4", ".ogg": "audio/ogg",
    ".opus": "audio/ogg", ".pdf": "application/pdf", ".txt": "text/plain", ".doc": "application/msword",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".xls": "application/vnd.ms-excel",
    ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ".ppt": "application/vnd.ms-powerpoint",
    ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
}
_KIND_OF = {mime: kind for kind, mimes in KINDS.items() for mime in mimes}


def bare(mime_type: str | None) -> str:
    """The type without its parameters, lower case: `Text/Plain; charset=utf-8` is `text/plain`."""
    return (mime_type or "").split(";", 1)[0].strip().lower()


def kind_of(mime_type: str | None) -> str | None:
    """The message kind a file of this type is sent as (image, video, audio, document); None when Meta sends no
    message of it."""
    return _KIND_OF.get(bare(mime_type))


def meta_limit(mime_type: str | None) -> int | None:
    """The largest file of this type the platform's upload takes; None when it takes none of it."""
    kind = kind_of(mime_type)
    return META_LIMITS[kind] if kind is not None else UPLOAD_ONLY_LIMITS.get(bare(mime_type))


def sendable_type(mime_type: str | None, filename: str | None) -> str | None:
    """The type a file is sent as: the one it was given when Meta takes it, else the one its name's ending says
    (a browser gives `application/octet-stream` or a vendor's `audio/x-m4a` for files it does not know); None when
    neither is a type Meta sends."""
    given = bare(mime_type)
    if given in _KIND_OF:
        return given
    return _BY_SUFFIX.get(PurePosixPath((filename or "").lower()).suffix)


def fits(kind: str, mime_type: str | None) -> bool:
    """Whether a file of `mime_type` may go as a message of `kind`: a document takes any file Meta takes, the
    others only their own types."""
    found = kind_of(mime_type)
    return found is not None and (kind == "document" or found == kind)


def accept() -> str:
    """A file field's `accept`: every type Meta sends, and the name endings a browser may not know the type of."""
    return ",".join((*_KIND_OF, *_BY_SUFFIX))
