"""Waiting, in tests, for something that happens asynchronously: poll a condition until it holds or a deadline
passes, and fail the test with a sentence saying what never happened.

A fixed `trio.sleep` in its place is either too short on a slow machine (a flaky test) or too long everywhere (a
slow one); these return as soon as the condition holds.
"""

from __future__ import annotations

import inspect
from typing import Any, Awaitable, Callable

import trio


async def eventually(check: Callable[[], Any | Awaitable[Any]], *, timeout: float = 10.0, interval: float = 0.02,
                     what: str | Callable[[], str] | None = None) -> Any:
    """Call `check` (plain or async, no arguments) every `interval` seconds until it returns something truthy,
    and return that. After `timeout` seconds (a check still running is cancelled) the test fails with an
    AssertionError naming the condition (`what`, a sentence or a function making one when it is needed; by
    default the check's source) and what it last returned. An exception raised by `check` ends the wait."""
    last: Any = None
    with trio.move_on_after(timeout):
        while True:
            result = check()
            last = await result if inspect.isawaitable(result) else result
            if last:
                return last
            await trio.sleep(interval)
    described = what() if callable(what) else what or _source_of(check)
    raise AssertionError(f"not within {timeout:g}s: {described} (it last gave {last!r})")


async def eventually_status(service, path: str, key: str, status: int, *, timeout: float = 5.0):
    """The response to `GET path` with `key` as bearer, once the running service (`service`, the e2e fixture)
    answers it with `status`: a change written straight to the database (a plan, a revocation, an expiry) reaches
    the server's credential cache through NOTIFY, within moments."""
    last = None

    async def answered():
        nonlocal last
        last = await service.client.get(path, headers={"Authorization": f"Bearer {key}"})
        return last if last.status_code == status else None

    def what() -> str:
        seen = "nothing" if last is None else f"{last.status_code} {last.text[:300]}"
        return f"GET {path} answered {status} (the last answer: {seen})"

    return await eventually(answered, timeout=timeout, interval=0.01, what=what)


def _source_of(check: Callable[..., Any]) -> str:
    """The check as written (a lambda's line), or its name."""
    name = getattr(check, "__qualname__", repr(check))
    if getattr(check, "__name__", "") == "<lambda>":
        try:
            return " ".join(inspect.getsource(check).split())[:300]
        except (OSError, TypeError):
            pass
    return name
