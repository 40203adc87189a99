"""A member's reply with a file attached (the agent inbox's composer): the file is uploaded to the platform's media
endpoint, then sent by its media id as the reply every composed message is (`chats.keyed_reply`), so the 24-hour
window, consent, assignment, the idempotency key and the outcome are a text reply's.

The rules, in order, each refusing before anything is uploaded or sent:

- the cloud API switched on for the workspace (as any send);
- a file of a type WhatsApp sends (`platform/media_types.py`: its given type, else its name's ending); audio takes no
  caption, as Meta's send does not;
- not empty; at most MAX_IMAGE_BYTES for a picture (Meta's 5 MiB), MAX_ATTACHMENT_BYTES for any other (ours, below
  Meta's 16 and 100 MiB: the reply form's body is at most 8 MiB, `inbox_http/body_limit.py`, and carries the
  caption too).

The upload happens once the member's key is held, outside the conversation actor (which only sends by the media
id), and is bounded in time (`platform/media.py`). A retry the key answers uploads nothing; one that takes over an
abandoned key uploads again, which is harmless (an upload sends nothing) while the send stays once per key. The
key's request is known by the file's SHA-256, its name and type and the caption, never the media id, which differs
per upload. A refused upload frees the key: nothing was sent.
"""

from __future__ import annotations

import hashlib
from typing import Annotated

import msgspec

from inbox_actors.platform import media_types
from inbox_actors.platform.payloads import MAX_CAPTION, SendRefused, SendRequest
from inbox_actors.use_cases import chats, permissions
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.fields import MULTI_LINE, ONE_LINE, ChatPhone, IdempotencyKey
from inbox_actors.use_cases.outcomes import Outcome, Reason, Refused
from inbox_actors.use_cases.use_case import Kind, UseCase, rule
from persistence.queries import workspaces as workspace_queries

MIB = media_types.MIB
MAX_IMAGE_BYTES = media_types.META_LIMITS["image"]
MAX_ATTACHMENT_BYTES = 7 * MIB
MAX_FILENAME = 240

KINDS_SENTENCE = ("WhatsApp takes pictures (JPEG, PNG), videos (MP4, 3GP), audio (AAC, AMR, MP3, M4A, OGG) and "
                  "documents (PDF, Word, Excel, PowerPoint, plain text)")
TOO_LARGE = (f"A file sent to WhatsApp from here is at most {MAX_ATTACHMENT_BYTES // MIB} MB (a picture "
             f"{MAX_IMAGE_BYTES // MIB} MB); this one is larger. Send a smaller file, or a link to it.")


class Limits(msgspec.Struct, frozen=True):
    """What the composer's file field says and checks before sending (the rules below decide)."""

    accept: str = media_types.accept()
    max_image_bytes: int = MAX_IMAGE_BYTES
    max_bytes: int = MAX_ATTACHMENT_BYTES
    too_large: str = TOO_LARGE
    unsupported: str = KINDS_SENTENCE
    caption_on_audio: str = "WhatsApp sends audio without text: send the text on its own, then the file."


LIMITS = Limits()


class ReplyWithAttachment(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    phone: ChatPhone
    file: Annotated[bytes, msgspec.Meta(max_length=MAX_ATTACHMENT_BYTES,
                                        extra=rule("attachment_too_large", TOO_LARGE, 413))]
    filename: Annotated[str, msgspec.Meta(
        min_length=1, max_length=MAX_FILENAME, pattern=ONE_LINE,
        extra=rule("invalid_filename", f"A file's name is 1 to {MAX_FILENAME} characters on one line; rename the "
                                       "file and attach it again."))]
    mime_type: Annotated[str, msgspec.Meta(max_length=200, pattern=ONE_LINE)] = ""
    caption: Annotated[str, msgspec.Meta(
        max_length=MAX_CAPTION, pattern=MULTI_LINE,
        extra=rule("invalid_caption", f"The text sent with a file is at most {MAX_CAPTION:,} characters; shorten "
                                      "it and send again."))] | None = None
    idempotency_key: IdempotencyKey | None = None


def _refused(sentence: str, code: str, status: int = 400) -> Refused:
    return Refused(Reason.INVALID, sentence, status, code)


def judged(a: ReplyWithAttachment) -> tuple[str, str] | Refused:
    """The file's type and message kind as it will be sent, or why it cannot be."""
    mime_type = media_types.sendable_type(a.mime_type, a.filename)
    kind = media_types.kind_of(mime_type)
    if mime_type is None or kind is None:
        return _refused(f"{KINDS_SENTENCE}; {a.filename} is none of these.", "unsupported_attachment", 415)
    if not a.file:
        return _refused(f"{a.filename} is empty; attach the file again.", "empty_attachment")
    if len(a.file) > (MAX_IMAGE_BYTES if kind == "image" else MAX_ATTACHMENT_BYTES):
        return _refused(TOO_LARGE, "attachment_too_large", 413)
    if kind == "audio" and a.caption:
        return _refused(LIMITS.caption_on_audio, "caption_on_audio")
    return mime_type, kind


async def _reply_with_attachment(deps: UseCaseDeps, caller: Caller, a: ReplyWithAttachment) -> Outcome:
    if (refused := chats.sending_refusal(caller)) is not None:
        return refused
    verdict = judged(a)
    if isinstance(verdict, Refused):
        return verdict
    mime_type, kind = verdict
    caption = (a.caption or "").strip() or None

    async def uploaded() -> SendRequest | Refused:
        media = deps.media()
        if media is None:
            return Refused(Reason.UNAVAILABLE, "The messaging platform is not connected yet; nothing was sent. Try "
                           "again shortly.", 502, "upload_failed")
        workspace = await workspace_queries.find_workspace(deps.db, caller.workspace_id)
        assert workspace is not None, "a caller's workspace exists"
        media_id = await media.upload(workspace["phone_number_id"], a.file, mime_type, a.filename)
        if isinstance(media_id, SendRefused):
            return _not_uploaded(media_id)
        return SendRequest(to="", type=kind, text=caption, media_id=media_id, mime_type=mime_type,
                           filename=a.filename)

    fingerprint = {"phone": a.phone, "sha256": hashlib.sha256(a.file).hexdigest(), "filename": a.filename,
                   "mime_type": mime_type, "caption": caption}
    return await chats.keyed_reply(deps, caller, REPLY_WITH_ATTACHMENT.name, a.phone, uploaded, a.idempotency_key,
                                   fingerprint)


def _not_uploaded(refusal: SendRefused) -> Refused:
    """The platform's refusal of the file (or no answer from it), worded for the member; nothing was sent."""
    said = refusal.details or refusal.title or refusal.message
    return Refused(Reason.REFUSED, f"WhatsApp did not take the file ({refusal.code}: {said}); nothing was sent.",
                   502, "upload_failed", data={"errorCode": refusal.code, "errorTitle": refusal.title,
                                               "errorSubcode": refusal.subcode, "errorDetails": refusal.details})


REPLY_WITH_ATTACHMENT = UseCase("reply_with_attachment", ReplyWithAttachment, permissions.CHAT_ACTIONS, Kind.WRITE,
                                _reply_with_attachment)
