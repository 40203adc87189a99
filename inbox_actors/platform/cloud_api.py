"""Meta's JSON for `POST /{phone_number_id}/messages`: the request, the success answer and the error body; and
the answer of `POST /{phone_number_id}/media` (an upload), `{"id"}`, whose errors are the same error body.

Both sides of the wire use this one module: the client encodes a `SendRequest` and decodes the answer, the
simulator decodes the request and encodes the answer, so the two can never drift apart. Decoding ignores
fields it does not know (Meta adds fields without notice).
"""

from __future__ import annotations

import msgspec

from inbox_actors.platform.payloads import MEDIA_TYPES, MESSAGE_TYPES, SendAccepted, SendRefused, SendRequest

MESSAGING_PRODUCT = "whatsapp"


class InvalidSendRequest(ValueError):
    """The body of a send is not one Meta would take (what the platform answers with error 100)."""


# -- the request --------------------------------------------------------------------------------------------

class TextBody(msgspec.Struct, frozen=True, omit_defaults=True):
    body: str
    preview_url: bool = False


class MediaBody(msgspec.Struct, frozen=True, omit_defaults=True):
    link: str | None = None
    id: str | None = None                    # an uploaded media's id (`POST /{phone_number_id}/media`)
    caption: str | None = None
    filename: str | None = None              # document only


class TemplateLanguage(msgspec.Struct, frozen=True, omit_defaults=True):
    code: str
    policy: str | None = None                # Meta's legacy "deterministic"; read and ignored


class TemplateParameter(msgspec.Struct, frozen=True, omit_defaults=True):
    type: str
    text: str | None = None


class TemplateComponent(msgspec.Struct, frozen=True, omit_defaults=True):
    type: str
    parameters: tuple[TemplateParameter, ...] = ()


class TemplateBody(msgspec.Struct, frozen=True, omit_defaults=True):
    name: str
    language: TemplateLanguage
    components: tuple[TemplateComponent, ...] = ()


class MessageRequest(msgspec.Struct, frozen=True, omit_defaults=True):
    to: str
    type: str = "text"
    messaging_product: str = MESSAGING_PRODUCT
    recipient_type: str = "individual"
    text: TextBody | None = None
    image: MediaBody | None = None
    video: MediaBody | None = None
    audio: MediaBody | None = None
    document: MediaBody | None = None
    template: TemplateBody | None = None
    biz_opaque_callback_data: str | None = None


# Meta's limit on biz_opaque_callback_data.
MAX_CALLBACK_DATA = 512


def encode_send_request(request: SendRequest) -> bytes:
    """The JSON body Meta expects for `request` (fields Meta does not take for that type are left out)."""
    fields: dict = {"to": request.to, "type": request.type}
    if request.type == "text":
        fields["text"] = TextBody(body=request.text or "")
    elif request.type == "template":
        components = ()
        if request.template_parameters:
            parameters = tuple(TemplateParameter(type="text", text=value) for value in request.template_parameters)
            components = (TemplateComponent(type="body", parameters=parameters),)
        fields["template"] = TemplateBody(name=request.template_name or "",
                                          language=TemplateLanguage(code=request.template_language or ""),
                                          components=components)
    elif request.type in MEDIA_TYPES:
        # Meta refuses a caption on audio and a filename on anything but a document.
        caption = request.text if request.type != "audio" else None
        filename = request.filename if request.type == "document" else None
        # By the uploaded media's id when it has one, else by link.
        link = request.media_url if request.media_id is None else None
        fields[request.type] = MediaBody(link=link, id=request.media_id, caption=caption, filename=filename)
    else:
        raise InvalidSendRequest(f"unknown message type {request.type!r}")
    if request.callback_data is not None:
        fields["biz_opaque_callback_data"] = request.callback_data
    # messaging_product, recipient_type and type are always written, although they are the defaults.
    body = msgspec.to_builtins(MessageRequest(**fields))
    return msgspec.json.encode({"messaging_product": MESSAGING_PRODUCT, "recipient_type": "individual",
                                "to": request.to, "type": request.type, **body})


def decode_send_request(raw: bytes) -> SendRequest:
    """The `SendRequest` a Meta request body describes. Raises InvalidSendRequest."""
    try:
        message = msgspec.json.decode(raw, type=MessageRequest)
    except msgspec.DecodeError as err:
        raise InvalidSendRequest(str(err)) from None
    if message.messaging_product != MESSAGING_PRODUCT:
        raise InvalidSendRequest("messaging_product must be whatsapp")
    if message.type not in MESSAGE_TYPES:
        raise InvalidSendRequest(f"unsupported message type {message.type!r}")
    if not message.to.strip():
        raise InvalidSendRequest("to is required")
    callback = message.biz_opaque_callback_data
    if callback is not None and len(callback) > MAX_CALLBACK_DATA:
        raise InvalidSendRequest(f"biz_opaque_callback_data is longer than {MAX_CALLBACK_DATA} characters")
    return msgspec.structs.replace(_request_of(message), callback_data=callback)


def _request_of(message: MessageRequest) -> SendRequest:
    if message.type == "text":
        if message.text is None or not message.text.body:
            raise InvalidSendRequest("text.body is required for a text message")
        return SendRequest(to=message.to, type="text", text=message.text.body)
    if message.type == "template":
        template = message.template
        if template is None or not template.name or not template.language.code:
            raise InvalidSendRequest("template.name and template.language.code are required")
        parameters = tuple(parameter.text or "" for component in template.components
                           if component.type == "body" for parameter in component.parameters)
        return SendRequest(to=message.to, type="template", template_name=template.name,
                           template_language=template.language.code, template_parameters=parameters)
    media: MediaBody | None = getattr(message, message.type)
    if media is None or not (media.link or media.id):
        raise InvalidSendRequest(f"{message.type}.link or {message.type}.id is required")
    if media.link and media.id:
        raise InvalidSendRequest(f"{message.type} takes a link or an id, not both")
    return SendRequest(to=message.to, type=message.type, text=media.caption, media_url=media.link or None,
                       media_id=media.id or None, filename=media.filename)


# -- the answers --------------------------------------------------------------------------------------------

class AnswerContact(msgspec.Struct, frozen=True):
    input: str
    wa_id: str


class AnswerMessage(msgspec.Struct, frozen=True, omit_defaults=True):
    id: str
    message_status: str | None = None        # "accepted"; Meta adds it for some sends


class SendAnswer(msgspec.Struct, frozen=True):
    messaging_product: str = MESSAGING_PRODUCT
    contacts: tuple[AnswerContact, ...] = ()
    messages: tuple[AnswerMessage, ...] = ()


class ErrorData(msgspec.Struct, frozen=True, omit_defaults=True):
    messaging_product: str | None = None
    details: str | None = None


class GraphError(msgspec.Struct, frozen=True, omit_defaults=True):
    message: str
    type: str = ""                           # "OAuthException" for every error of the send call
    code: int = 0
    error_subcode: int | None = None
    error_user_title: str | None = None
    error_user_msg: str | None = None
    error_data: ErrorData | None = None
    fbtrace_id: str | None = None


class ErrorAnswer(msgspec.Struct, frozen=True):
    error: GraphError


def encode_accepted(recipient_input: str, wa_id: str, message_id: str) -> bytes:
    return msgspec.json.encode(SendAnswer(contacts=(AnswerContact(input=recipient_input, wa_id=wa_id),),
                                          messages=(AnswerMessage(id=message_id),)))


def encode_error(error: GraphError) -> bytes:
    return msgspec.json.encode(ErrorAnswer(error=error))


class UnexpectedAnswer(ValueError):
    """The platform answered something that is neither Meta's success nor Meta's error body."""


def decode_answer(status: int, raw: bytes) -> SendAccepted | SendRefused:
    """Meta's answer to a send as a value. Raises UnexpectedAnswer for anything else (not JSON, other shapes)."""
    if 200 <= status < 300:
        try:
            answer = msgspec.json.decode(raw, type=SendAnswer)
        except msgspec.DecodeError as err:
            raise UnexpectedAnswer(f"success answer is not Meta's: {err}") from None
        if not answer.messages or not answer.messages[0].id:
            raise UnexpectedAnswer("success answer carries no message id")
        return SendAccepted(message_id=answer.messages[0].id)
    return _refusal(status, raw)


def _refusal(status: int, raw: bytes) -> SendRefused:
    try:
        error = msgspec.json.decode(raw, type=ErrorAnswer).error
    except msgspec.DecodeError as err:
        raise UnexpectedAnswer(f"HTTP {status} without Meta's error body: {err}") from None
    return SendRefused(
        message=error.message, code=error.code, title=error.error_user_title or error.type or error.message,
        subcode=error.error_subcode, details=error.error_data.details if error.error_data else None,
        http_status=status,
    )


# -- an upload ----------------------------------------------------------------------------------------------

class UploadAnswer(msgspec.Struct, frozen=True):
    """Meta's answer to an upload: the media's id, which a send names it by."""

    id: str


def encode_uploaded(media_id: str) -> bytes:
    return msgspec.json.encode(UploadAnswer(id=media_id))


def decode_upload_answer(status: int, raw: bytes) -> str | SendRefused:
    """The uploaded media's id, or Meta's refusal as a value. Raises UnexpectedAnswer for anything else."""
    if 200 <= status < 300:
        try:
            answer = msgspec.json.decode(raw, type=UploadAnswer)
        except msgspec.DecodeError as err:
            raise UnexpectedAnswer(f"upload answer is not Meta's: {err}") from None
        if not answer.id:
            raise UnexpectedAnswer("upload answer carries no media id")
        return answer.id
    return _refusal(status, raw)

