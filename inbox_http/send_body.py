"""The body of a send (`POST /api/send-message`, an agent's reply), read into a SendRequest.

Fields: `to` (the send route only), `type` (text default; template, image, video, audio, document),
`message` (the text, or the caption of media), `media_url` (media), `filename` (document), `template`
({name, language, parameters}). Missing required fields give the spec's sentences; other bad input a clear
sentence of ours. Nothing is sent when the body is refused.
"""

from __future__ import annotations

from typing import Any

import msgspec

from inbox_actors.domain.phones import PHONE_PATTERN, InvalidPhone, normalise_phone
from inbox_actors.domain.text import has_control_characters
from inbox_actors.platform.payloads import (
    MAX_CAPTION,
    MAX_PARAMETERS,
    MAX_TEXT,
    MEDIA_TYPES,
    MESSAGE_TYPES,
    SendRequest,
)
from inbox_http.errors import SentenceError
from inbox_http.json_body import NOT_UTF8, is_utf8

PHONE_REQUIRED = "Phone number is required"
TEXT_REQUIRED = "Message text is required"
TEMPLATE_REQUIRED = "Template name is required"


class SendBody(msgspec.Struct):
    to: Any = None
    type: Any = "text"
    message: Any = None
    media_url: Any = None
    filename: Any = None
    template: Any = None


def read_send_body(raw: bytes, *, needs_recipient: bool = True) -> tuple[str | None, SendRequest]:
    """(normalised recipient or None, the request without its recipient). Raises SentenceError (400)."""
    if not is_utf8(raw):
        raise SentenceError(400, NOT_UTF8)
    try:
        body = msgspec.json.decode(raw or b"null", type=SendBody | None)
    except msgspec.DecodeError:
        raise SentenceError(400, "Request body must be a JSON object") from None
    if body is None:
        body = SendBody()
    to = None
    if needs_recipient:
        if body.to in (None, ""):
            raise SentenceError(400, PHONE_REQUIRED)
        if not isinstance(body.to, str):
            raise SentenceError(400, "Phone number must be a string")
        try:
            to = normalise_phone(body.to)
        except InvalidPhone as err:
            raise SentenceError(400, f"Invalid phone number: {err}") from None
    kind = body.type if body.type is not None else "text"
    if kind not in MESSAGE_TYPES:
        raise SentenceError(400, f"Message type must be one of {', '.join(MESSAGE_TYPES)}")
    if kind == "template":
        return to, _template(body.template)
    text = _optional_text(body.message, "Message text", MAX_TEXT if kind == "text" else MAX_CAPTION)
    if kind == "text":
        if not text:
            raise SentenceError(400, TEXT_REQUIRED)
        return to, SendRequest(to=to or "", type="text", text=text)
    media_url = _optional_text(body.media_url, "media_url", 2048)
    if not media_url or not media_url.startswith(("http://", "https://")):
        raise SentenceError(400, f"Media URL is required for {kind} messages (an http or https URL)")
    filename = _optional_text(body.filename, "filename", 240) if kind == "document" else None
    assert kind in MEDIA_TYPES
    return to, SendRequest(to=to or "", type=kind, text=text, media_url=media_url, filename=filename)


def _template(raw: Any) -> SendRequest:
    if not isinstance(raw, dict) or raw.get("name") in (None, ""):
        raise SentenceError(400, TEMPLATE_REQUIRED)
    name, language, parameters = raw.get("name"), raw.get("language", "en"), raw.get("parameters", [])
    if not isinstance(name, str) or len(name) > 512:
        raise SentenceError(400, "Template name must be a string")
    _refuse_control(name, "Template name")
    if not isinstance(language, str) or not 2 <= len(language) <= 15:
        raise SentenceError(400, "Template language must be a locale code such as en or en_US")
    if not isinstance(parameters, list) or len(parameters) > MAX_PARAMETERS or \
            not all(isinstance(p, (str, int, float)) and not isinstance(p, bool) for p in parameters):
        raise SentenceError(400, f"Template parameters must be a list of at most {MAX_PARAMETERS} strings")
    _refuse_control(language, "Template language")
    values = tuple(str(p) for p in parameters)
    for value in values:
        _refuse_control(value, "Template parameters")
    return SendRequest(to="", type="template", template_name=name, template_language=language,
                       template_parameters=values)


def _optional_text(value: Any, field: str, limit: int) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise SentenceError(400, f"{field} must be a string")
    if len(value) > limit:
        raise SentenceError(400, f"{field} must be at most {limit} characters")
    _refuse_control(value, field)
    return value.strip() or None


def _refuse_control(value: str, field: str) -> None:
    if has_control_characters(value):
        raise SentenceError(400, f"{field} may not contain control characters")


def send_body_schema(*, needs_recipient: bool = True) -> dict:
    """The JSON Schema of what `read_send_body` accepts, from the same limits: the message kinds are alternatives
    told apart by `type`; fields a kind does not read are ignored."""
    lines = r"[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f]"
    text = {"type": "string", "maxLength": MAX_TEXT, "pattern": rf"^{lines}*[^\s\x00-\x1f\x7f\x85]{lines}*$"}
    caption = {"type": ["string", "null"], "maxLength": MAX_CAPTION, "pattern": rf"^{lines}*$"}
    media_url = {"type": "string", "maxLength": 2048, "pattern": rf"^[ \t\n\r]*https?://{lines}*$"}
    parameter = {"anyOf": [{"type": "string", "pattern": rf"^{lines}*$"}, {"type": "number"}]}
    template = {
        "type": "object", "required": ["name"],
        "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": 512, "pattern": rf"^{lines}*$"},
            "language": {"type": "string", "minLength": 2, "maxLength": 15, "pattern": rf"^{lines}*$",
                         "default": "en", "description": "a locale code such as en or en_US"},
            "parameters": {"type": "array", "maxItems": MAX_PARAMETERS, "items": parameter, "default": []},
        },
    }
    kinds = [
        {"properties": {"type": {"enum": ["text", None], "default": "text"}, "message": text},
         "required": ["message"]},
        {"properties": {"type": {"const": "template"}, "template": template}, "required": ["type", "template"]},
        {"properties": {"type": {"enum": [kind for kind in MEDIA_TYPES if kind != "document"]},
                        "message": caption, "media_url": media_url}, "required": ["type", "media_url"]},
        {"properties": {"type": {"const": "document"}, "message": caption, "media_url": media_url,
                        "filename": {"type": ["string", "null"], "maxLength": 240, "pattern": rf"^{lines}*$"}},
         "required": ["type", "media_url"]},
    ]
    schema: dict = {"type": "object", "anyOf": kinds}
    if needs_recipient:
        schema["properties"] = {"to": {"type": "string", "pattern": PHONE_PATTERN,
                                       "description": "digits with country code; + and spaces accepted"}}
        schema["required"] = ["to"]
    return schema
