"""The platform's per-number throughput limit reaches the caller as 130429 (the simulator's limit lowered to
5 messages a second, so the test does not depend on how fast this machine sends)."""

from __future__ import annotations

import pytest
import trio

from inbox_actors import templates
from tests.e2e.chat_helpers import scale_workspace
from tests.e2e.conftest import with_settings
from tests.e2e.test_send_message import send


@pytest.fixture
def service_settings(service_settings):
    return with_settings(service_settings, simulator_throughput=5)


async def test_the_platform_throughput_limit_gives_130429(service):
    workspace_id, _, _, key = await scale_workspace(service.db)
    await templates.add_template(service.db, workspace_id=workspace_id, name="ping", language="en", body="Ping")
    codes: list[int] = []

    async def one(n: int) -> None:
        answer = await send(service, key, {"to": f"91981{n:07d}", "type": "template",
                                           "template": {"name": "ping", "language": "en"}})
        codes.append(200 if answer.status_code == 200 else answer.json()["errorCode"])

    async with trio.open_nursery() as nursery:
        for n in range(20):
            nursery.start_soon(one, n + 1)
    assert codes.count(200) >= 1 and 130429 in codes
    assert set(codes) <= {200, 130429}

