"""The reply form's attachment: a file chosen in the composer's "Attach" field arrives with the reply (a multipart
form, which works without the script), and the reply is then the declared reply with an attachment
(`use_cases/attachments.py`): the file uploaded to the platform, then sent by its media id, the reply's text its
caption, under the form's idempotency key. A reply without a file is the text reply it always was.

The form's body may be up to 8 MiB on this path (`inbox_http/body_limit.py`); the use case's own bounds (5 MiB for a
picture, 7 MiB for any other file) are below it, so a file over them gets the rule's sentence beside the box, with
the text kept. Drafts keep only the text: a browser cannot put a file back into a file field.
"""

from __future__ import annotations

from typing import Any

from quart import request

from inbox_actors.use_cases.attachments import REPLY_WITH_ATTACHMENT
from inbox_actors.use_cases.use_case import UseCase
from inbox_http.web import composer

FILE_FIELD = "attachment"


async def attached(action: str, form) -> tuple[UseCase, dict[str, Any]] | None:
    """The reply with an attachment's use case and arguments, when the reply form carries a file (None: the form's
    own use case, as for any form)."""
    if action != "reply" or request.mimetype != "multipart/form-data":
        return None
    part = (await request.files).get(FILE_FIELD)
    if part is None or not part.filename:
        return None                       # the field left empty: a text reply
    caption = composer.form_text(form, "text").strip()
    return REPLY_WITH_ATTACHMENT, {
        "file": part.read(), "filename": _base_name(part.filename), "mime_type": part.mimetype or "",
        **({"caption": caption} if caption else {}), **composer.key_of(form)}


def _base_name(filename: str) -> str:
    """The file's own name: some browsers have sent the path it was chosen from."""
    return filename.replace("\\", "/").rsplit("/", 1)[-1].strip() or "file"
