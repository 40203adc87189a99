"""Sends are paced under the number's throughput: a burst larger than the platform's per-second limit is
spread out instead of refused (platform and pacing both at 10 messages a second here)."""

from __future__ import annotations

import pytest
import trio

from inbox_actors import templates
from tests.e2e.chat_helpers import scale_workspace
from tests.e2e.conftest import with_settings
from tests.e2e.test_send_message import send


@pytest.fixture
def service_settings(service_settings):
    return with_settings(service_settings, simulator_throughput=10, platform_sends_per_second=10)


async def test_a_burst_over_the_platform_limit_is_spread_out_not_refused(service):
    workspace_id, _, _, key = await scale_workspace(service.db)
    await templates.add_template(service.db, workspace_id=workspace_id, name="ping", language="en", body="Ping")
    statuses: list[int] = []

    async def one(n: int) -> None:
        answer = await send(service, key, {"to": f"91982{n:07d}", "type": "template",
                                           "template": {"name": "ping", "language": "en"}})
        statuses.append(answer.status_code if answer.status_code == 200 else answer.json()["errorCode"])

    started = trio.current_time()
    async with trio.open_nursery() as nursery:
        for n in range(25):
            nursery.start_soon(one, n + 1)
    assert statuses == [200] * 25, str(statuses)
    assert trio.current_time() - started >= 1.0  # 25 sends at 10 a second cannot all go in the first second
