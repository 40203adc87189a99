"""Meta's media table (`platform/media_types.py`), the simulator's upload rules and the statuses of media it cannot
deliver, and the composer's own rules on an attachment (`use_cases/attachments.judged`)."""

from __future__ import annotations

import pytest

from inbox_actors.platform import media_types
from inbox_actors.platform.simulator.rules import StatusDelays, planned_statuses, upload_refusal
from inbox_actors.use_cases.attachments import MAX_ATTACHMENT_BYTES, ReplyWithAttachment, judged
from inbox_actors.use_cases.outcomes import Refused

MIB = media_types.MIB


@pytest.mark.parametrize(("given", "name", "expected"), [
    ("image/png", "a.png", "image/png"),
    ("Image/JPEG; charset=binary", "a.jpg", "image/jpeg"),
    ("audio/x-m4a", "note.m4a", "audio/mp4"),
    ("application/octet-stream", "Prices.XLSX", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
    ("", "minutes.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
    ("image/webp", "sticker.webp", None),
    ("application/x-msdownload", "setup.exe", None),
])
def test_the_type_a_file_is_sent_as(given, name, expected):
    assert media_types.sendable_type(given, name) == expected


def test_kinds_limits_and_what_a_kind_carries():
    assert media_types.kind_of("video/3gpp") == "video" and media_types.kind_of("text/plain") == "document"
    assert media_types.meta_limit("image/png") == 5 * MIB and media_types.meta_limit("application/pdf") == 100 * MIB
    assert media_types.meta_limit("image/webp") == 500 * 1024 and media_types.meta_limit("image/gif") is None
    assert media_types.fits("document", "image/png") and media_types.fits("image", "image/png")
    assert not media_types.fits("image", "application/pdf") and not media_types.fits("audio", "video/mp4")
    accept = media_types.accept().split(",")
    assert "image/png" in accept and ".docx" in accept and "image/webp" not in accept


def test_the_simulator_judges_an_upload_by_its_type_then_its_size():
    assert upload_refusal("image/png", 5 * MIB) is None
    assert upload_refusal("image/png", 5 * MIB + 1).error.code == 131053
    assert upload_refusal("video/mp4", 16 * MIB) is None and upload_refusal("video/mp4", 16 * MIB + 1) is not None
    assert upload_refusal("application/zip", 10).error.code == 100
    assert upload_refusal("audio/opus", 1000) is None                  # taken, though no message of ours sends it


def test_media_the_platform_cannot_deliver_is_sent_then_failed():
    sent, failed = planned_statuses("447700900123", read_receipts=True, delays=StatusDelays(), media_fails=True)
    assert (sent.status, failed.status, failed.error_code, failed.error_title) == (
        "sent", "failed", 131053, "Media upload error")


def attachment(**fields) -> ReplyWithAttachment:
    return ReplyWithAttachment(**{"phone": "919811500001", "file": b"x" * 10, "filename": "a.pdf",
                                  "mime_type": "application/pdf", **fields})


def test_the_composer_s_rules_on_an_attachment():
    assert judged(attachment()) == ("application/pdf", "document")
    assert judged(attachment(file=b"\xff" * (5 * MIB), filename="a.jpg", mime_type="image/jpeg")) == (
        "image/jpeg", "image")
    too_big = judged(attachment(file=b"\xff" * (5 * MIB + 1), filename="a.jpg", mime_type="image/jpeg"))
    assert isinstance(too_big, Refused) and (too_big.status, too_big.code) == (413, "attachment_too_large")
    assert judged(attachment(file=b"\0" * MAX_ATTACHMENT_BYTES, filename="clip.mp4", mime_type="video/mp4")) == (
        "video/mp4", "video")
    empty = judged(attachment(file=b""))
    assert isinstance(empty, Refused) and empty.code == "empty_attachment"
    audio = judged(attachment(filename="note.ogg", mime_type="audio/ogg", caption="Listen"))
    assert isinstance(audio, Refused) and audio.code == "caption_on_audio"
    unsupported = judged(attachment(filename="a.gif", mime_type="image/gif"))
    assert isinstance(unsupported, Refused) and (unsupported.status, unsupported.code) == (
        415, "unsupported_attachment")
    assert "a.gif is none of these" in unsupported.message
