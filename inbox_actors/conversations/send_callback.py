"""The callback data of a send: its message row's id, as it travels to the platform in
`biz_opaque_callback_data` and comes back on every status of the message (Meta echoes it). A status whose
platform id is unknown (the send's answer was lost in a crash) finds its row by it."""

from __future__ import annotations

MAX_ROW_ID = 2**63 - 1


def callback_data(message_id: int) -> str:
    return str(message_id)


def message_id_of(callback: str | None) -> int | None:
    """The row id a status's callback data names; None when it names none of ours."""
    if callback is None or not callback.isascii() or not callback.isdigit() or len(callback) > 19:
        return None
    value = int(callback)
    return value if 0 < value <= MAX_ROW_ID else None
