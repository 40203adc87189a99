"""Fixtures the integration tests share."""

from __future__ import annotations

import pytest

from inbox_actors.access.rate_bucket import rate_bucket_kinds
from inbox_actors.runtime import ActorSystem


@pytest.fixture
async def bucket_actors(nursery):
    """A running actor system of the rate buckets alone (by key and by address)."""
    system = ActorSystem(rate_bucket_kinds())
    await nursery.start(system.run)
    yield system
    await system.shutdown(1)


# The use cases with real actors and no HTTP (`use_case_harness.py`), for every layer test.
from tests.integration.use_case_harness import use_cases  # noqa: E402,F401
