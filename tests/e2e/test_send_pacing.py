"""Sends are paced under the number's throughput: a burst larger than the platform's per-second limit is
spread out instead of refused (platform and pacing both at 10 messages a second here)."""

from __future__ import annotations

import pytest
import trio

from tests.e2e.chat_helpers import template_burst
from tests.e2e.conftest import with_settings


@pytest.fixture
def service_settings(service_settings):
    return with_settings(service_settings, simulator_throughput=10, platform_sends_per_second=10)


async def test_a_burst_over_the_platform_limit_is_spread_out_not_refused(service):
    started = trio.current_time()
    outcomes = await template_burst(service, 25, prefix="91982")
    assert outcomes == [200] * 25, str(outcomes)
    assert trio.current_time() - started >= 1.0  # 25 sends at 10 a second cannot all go in the first second
