"""The AI agent's cost per day as a bar chart the bot's page draws as inline SVG: no script and no style attribute
(the pages' Content-Security-Policy allows neither), so the geometry is computed here and the colours are the
style sheet's (`.usage-chart`). A chart is a picture for the eye; the page's table beside it holds the same
figures for everyone, and `summary` (the chart's `aria-label`) says what it shows in a sentence.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import date, timedelta, timezone

import msgspec

from inbox_actors.ai_agent.usage import Usage

WIDTH = 640
HEIGHT = 160
TOP = 8
BOTTOM = 22
"""Room under the bars for the days' labels."""
BASELINE = 1.5
"""A day that cost nothing still shows as a line, so the days read as a row."""


class Bar(msgspec.Struct, frozen=True):
    day: date
    cost_usd: float
    x: float
    y: float
    width: float
    height: float
    label_x: float


class Chart(msgspec.Struct, frozen=True):
    bars: list[Bar]
    width: int
    height: int
    label_y: int
    summary: str


def usd(value: float) -> str:
    """Dollars as a person reads them: cents for a dollar amount, more decimals for the fractions a model call
    costs ("$0.000123"), never in exponent notation."""
    if value == 0:
        return "$0.00"
    if abs(value) >= 0.01:
        return f"${value:,.2f}"
    return "$" + f"{value:.6f}".rstrip("0")


def cost_chart(usage: Usage) -> Chart:
    """A bar per UTC day of the usage's window (every model's cost summed), scaled to the dearest day."""
    costs: dict[date, float] = defaultdict(float)
    for row in usage.data:
        costs[row.day] += row.cost_usd
    first = usage.window.start.astimezone(timezone.utc).date()
    last = usage.window.end.astimezone(timezone.utc).date()
    days = [first + timedelta(days=n) for n in range((last - first).days + 1)]
    top = max((costs[day] for day in days), default=0.0)
    room = HEIGHT - TOP - BOTTOM
    slot = WIDTH / max(len(days), 1)
    bars = []
    for index, day in enumerate(days):
        height = max(BASELINE, room * costs[day] / top) if top > 0 else BASELINE
        x = index * slot + slot * 0.15
        bars.append(Bar(day, round(costs[day], 6), round(x, 2), round(TOP + room - height, 2), round(slot * 0.7, 2),
                        round(height, 2), round(index * slot + slot / 2, 2)))
    total = sum(bar.cost_usd for bar in bars)
    dearest = max(bars, key=lambda bar: bar.cost_usd, default=None)
    summary = f"Cost per day from {_day(first)} to {_day(last)} (UTC): {usd(total)} in all"
    summary += f", most on {_day(dearest.day)} ({usd(dearest.cost_usd)})." if dearest and top > 0 else \
        ", nothing spent."
    return Chart(bars, WIDTH, HEIGHT, HEIGHT - 6, summary)


def _day(day: date) -> str:
    return f"{day.day} {day:%b}"
