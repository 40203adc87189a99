"""Meta's JSON for `POST /{phone_number_id}/messages`: the request, the success answer and the error body; and
the answer of `POST /{phone_number_id}/media` (an upload), `{"id"}`, whose errors are the same error body.

Both sides of the wire use this one module: the client encodes a `SendRequest` and decodes the answer, the
simulator decodes the request and encodes the answer, so the two can never drift apart. Decoding ignores
fields it does not know (Meta adds fields without notice).

Besides what clients send (MESSAGE_TYPES), the wire carries the service's own interactive list message
(PLATFORM_TYPES): decoding holds it to Meta's limits on a list, so the simulator refuses what Meta refuses. Meta's
other interactive kinds (reply buttons, products, flows) are refused: `SendRequest` has no place for them.
"""

from __future__ import annotations

import msgspec

from inbox_actors.platform.payloads import (
    INTERACTIVE,
    MAX_LIST_BODY,
    MAX_LIST_BUTTON,
    MAX_LIST_ROWS,
    MAX_ROW_DESCRIPTION,
    MAX_ROW_ID,
    MAX_ROW_TITLE,
    MEDIA_TYPES,
    PLATFORM_TYPES,
    InteractiveList,
    ListRow,
    SendAccepted,
    SendRefused,
    SendRequest,
)

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


class ListRowBody(msgspec.Struct, frozen=True, omit_defaults=True):
    id: str
    title: str
    description: str | None = None


class ListSection(msgspec.Struct, frozen=True, omit_defaults=True):
    title: str | None = None                 # required by Meta only when a list has more than one section
    rows: tuple[ListRowBody, ...] = ()


class InteractiveAction(msgspec.Struct, frozen=True, omit_defaults=True):
    button: str | None = None                # the label of the button that opens the list
    sections: tuple[ListSection, ...] = ()


class InteractiveText(msgspec.Struct, frozen=True):
    text: str


class InteractiveBody(msgspec.Struct, frozen=True, omit_defaults=True):
    type: str                                # "list" (Meta's others are refused, see the module's docstring)
    body: InteractiveText | None = None
    action: InteractiveAction | None = None


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
    interactive: InteractiveBody | None = None
    biz_opaque_callback_data: str | None = None


# Meta's limit on biz_opaque_callback_data.
MAX_CALLBACK_DATA = 512
# Meta's limit on a list section's title.
MAX_SECTION_TITLE = 24


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
    elif request.type == INTERACTIVE:
        if request.interactive is None:
            raise InvalidSendRequest("an interactive message needs its list")
        fields["interactive"] = _wire_list(request.interactive)
    else:
        raise InvalidSendRequest(f"unknown message type {request.type!r}")
    if request.callback_data is not None:
        fields["biz_opaque_callback_data"] = request.callback_data
    # messaging_product, recipient_type and type are always written, although they are the defaults.
    body = msgspec.to_builtins(MessageRequest(**fields))
    return msgspec.json.encode({"messaging_product": MESSAGING_PRODUCT, "recipient_type": "individual",
                                "to": request.to, "type": request.type, **body})


def _wire_list(listed: InteractiveList) -> InteractiveBody:
    rows = tuple(ListRowBody(id=row.id, title=row.title, description=row.description) for row in listed.rows)
    return InteractiveBody(type="list", body=InteractiveText(text=listed.body), action=InteractiveAction(
        button=listed.button, sections=(ListSection(title=listed.section_title, rows=rows),)))


def decode_send_request(raw: bytes) -> SendRequest:
    """The `SendRequest` a Meta request body describes. Raises InvalidSendRequest."""
    try:
        message = msgspec.json.decode(raw, type=MessageRequest)
    except msgspec.DecodeError as err:
        raise InvalidSendRequest(str(err)) from None
    if message.messaging_product != MESSAGING_PRODUCT:
        raise InvalidSendRequest("messaging_product must be whatsapp")
    if message.type not in PLATFORM_TYPES:
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
    if message.type == INTERACTIVE:
        return SendRequest(to=message.to, type=INTERACTIVE, interactive=_list_of(message.interactive))
    media: MediaBody | None = getattr(message, message.type)
    if media is None or not (media.link or media.id):
        raise InvalidSendRequest(f"{message.type}.link or {message.type}.id is required")
    if media.link and media.id:
        raise InvalidSendRequest(f"{message.type} takes a link or an id, not both")
    return SendRequest(to=message.to, type=message.type, text=media.caption, media_url=media.link or None,
                       media_id=media.id or None, filename=media.filename)


def _list_of(interactive: InteractiveBody | None) -> InteractiveList:
    """The list message `interactive` describes, held to Meta's limits on one: the rows of all its sections in
    one, under the first section's title. Raises InvalidSendRequest."""
    if interactive is None:
        raise InvalidSendRequest("interactive is required for an interactive message")
    if interactive.type != "list":
        raise InvalidSendRequest(f"interactive.type {interactive.type!r} is not supported; it must be list")
    body = interactive.body.text if interactive.body else ""
    if not body:
        raise InvalidSendRequest("interactive.body.text is required for a list message")
    _at_most("interactive.body.text", body, MAX_LIST_BODY)
    action = interactive.action or InteractiveAction()
    if not action.button:
        raise InvalidSendRequest("interactive.action.button is required for a list message")
    _at_most("interactive.action.button", action.button, MAX_LIST_BUTTON)
    if not action.sections:
        raise InvalidSendRequest("interactive.action.sections is required for a list message")
    for number, section in enumerate(action.sections):
        if section.title:
            _at_most(f"interactive.action.sections[{number}].title", section.title, MAX_SECTION_TITLE)
        elif len(action.sections) > 1:
            raise InvalidSendRequest(f"interactive.action.sections[{number}].title is required when a list has "
                                     "more than one section")
    rows = [(f"interactive.action.sections[{number}].rows[{place}]", row)
            for number, section in enumerate(action.sections) for place, row in enumerate(section.rows)]
    if not rows:
        raise InvalidSendRequest("a list message needs at least one row")
    if len(rows) > MAX_LIST_ROWS:
        raise InvalidSendRequest(f"total row count {len(rows)} exceeds the maximum of {MAX_LIST_ROWS} rows "
                                 "across all sections")
    ids: set[str] = set()
    for path, row in rows:
        if not row.id or not row.title:
            raise InvalidSendRequest(f"{path}.id and {path}.title are required")
        _at_most(f"{path}.id", row.id, MAX_ROW_ID)
        _at_most(f"{path}.title", row.title, MAX_ROW_TITLE)
        if row.description is not None:
            _at_most(f"{path}.description", row.description, MAX_ROW_DESCRIPTION)
        if row.id in ids:
            raise InvalidSendRequest(f"{path}.id {row.id!r} is not unique: row ids must differ across all sections")
        ids.add(row.id)
    return InteractiveList(body=body, button=action.button, section_title=action.sections[0].title,
                           rows=tuple(ListRow(id=row.id, title=row.title, description=row.description)
                                      for _, row in rows))


def _at_most(path: str, value: str, limit: int) -> None:
    if len(value) > limit:
        raise InvalidSendRequest(f"{path} must be at most {limit} characters long ({len(value)} given)")


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

