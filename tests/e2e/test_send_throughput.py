"""The platform's per-number throughput limit reaches the caller as 130429 (the simulator's limit lowered to
5 messages a second, under the service's own pacing of 80, so the test does not depend on how fast this
machine sends)."""

from __future__ import annotations

import pytest

from tests.e2e.chat_helpers import template_burst
from tests.e2e.conftest import with_settings


@pytest.fixture
def service_settings(service_settings):
    return with_settings(service_settings, simulator_throughput=5)


async def test_the_platform_throughput_limit_gives_130429(service):
    outcomes = await template_burst(service, 20, prefix="91981")
    assert outcomes.count(200) >= 1 and 130429 in outcomes
    assert set(outcomes) <= {200, 130429}
