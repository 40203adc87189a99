"""What an API send answers for each reply of the conversation actor: the spec's 200 and 500 bodies, which are
remembered, and the refusals that sent nothing, which are not."""

import msgspec
import pytest

from inbox_actors.conversations.conversation_protocol import NotVisible, Refused, SendOutcome
from inbox_actors.conversations.send_answers import SendRefusal, SendVerdict, send_answer
from inbox_actors.platform.payloads import SendRefused


def test_an_accepted_send_answers_200_with_its_message_id_and_channel():
    answer = send_answer(SendOutcome(channel="whatsapp", platform_message_id="wamid.1"))
    assert isinstance(answer, SendVerdict) and answer.status == 200
    assert msgspec.json.decode(msgspec.json.encode(answer.body)) == {
        "success": True, "messageId": "wamid.1", "channel": "whatsapp"}


def test_a_platform_failure_answers_500_with_the_platforms_reason():
    failure = SendRefused(message="Re-engagement message", code=131047, title="Re-engagement message",
                          details="More than 24 hours have passed")
    answer = send_answer(SendOutcome(channel="whatsapp", failure=failure))
    assert isinstance(answer, SendVerdict) and answer.status == 500
    assert msgspec.json.decode(msgspec.json.encode(answer.body)) == {
        "error": "Re-engagement message", "errorCode": 131047, "errorTitle": "Re-engagement message",
        "errorSubcode": None, "errorDetails": "More than 24 hours have passed"}


@pytest.mark.parametrize("reply, refusal", [
    (NotVisible(), SendRefusal(404, "Contact not found")),
    (Refused(status=403, code="opted_out", message="Contact has opted out"),
     SendRefusal(403, "Contact has opted out")),
    (SendOutcome(channel="whatsapp", refused_status=400, refused_sentence="Contact has no WhatsApp"),
     SendRefusal(400, "Contact has no WhatsApp")),
    (SendOutcome(channel="whatsapp", refused_status=409), SendRefusal(409, "The message was not sent")),
])
def test_refusals_that_sent_nothing_are_a_status_and_a_sentence(reply, refusal):
    assert send_answer(reply) == refusal


def test_any_other_reply_is_a_bug_not_an_answer():
    with pytest.raises(TypeError):
        send_answer(object())
