"""Bar charts the reports page draws as inline SVG: no script and no style attribute (the pages'
Content-Security-Policy allows neither), so the geometry is computed here and the colours are the style sheet's
(`.chart .series-0`, `.series-1`, `.goal-line`: light and dark). A chart is a picture for the eye; the page puts the
table of the same figures after each one, and `summary` (the chart's `aria-label`) says what it shows in a sentence.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

WIDTH = 720
HEIGHT = 200
TOP = 14
BOTTOM = 24
"""Room under the bars for the categories' labels."""
LEFT = 36
"""Room left of the bars for the scale's top value."""
BASELINE = 1.0
"""A zero still shows as a line, so the categories read as a row."""
MAX_LABELS = 16
MAX_BAR = 48


class Bar(msgspec.Struct, frozen=True):
    series: int
    value: float
    x: float
    y: float
    width: float
    height: float
    title: str
    """What a pointer over the bar reads (its category, series and value)."""


class Label(msgspec.Struct, frozen=True):
    x: float
    text: str


class Chart(msgspec.Struct, frozen=True):
    bars: list[Bar]
    labels: list[Label]
    series: list[str]
    width: int
    height: int
    left: int
    label_y: int
    top_value: str
    summary: str


def grouped_bars(categories: Sequence[str], series: Sequence[tuple[str, Sequence[float]]], summary: str,
                 unit: str = "") -> Chart:
    """A group of bars per category, one per series, scaled to the largest value; every category labelled when
    there are few, else every n-th."""
    top = max((value for _, values in series for value in values), default=0.0)
    room = HEIGHT - TOP - BOTTOM
    slot = (WIDTH - LEFT) / max(len(categories), 1)
    # A group fills most of its slot, but a bar is never wider than MAX_BAR: a few categories stay bars, not walls.
    width = min(slot * 0.8 / max(len(series), 1), MAX_BAR)
    margin = (slot - width * len(series)) / 2
    bars = []
    for index, category in enumerate(categories):
        for number, (name, values) in enumerate(series):
            value = values[index]
            height = max(BASELINE, room * value / top) if top > 0 else BASELINE
            x = LEFT + index * slot + margin + number * width
            bars.append(Bar(number, value, round(x, 2), round(TOP + room - height, 2), round(width * 0.92, 2),
                            round(height, 2), f"{category}: {name} {_number(value)}{unit}"))
    every = max(1, -(-len(categories) // MAX_LABELS))
    labels = [Label(round(LEFT + index * slot + slot / 2, 2), category)
              for index, category in enumerate(categories) if index % every == 0]
    return Chart(bars, labels, [name for name, _ in series], WIDTH, HEIGHT, LEFT, HEIGHT - 8,
                 f"{_number(top)}{unit}", summary)


class GoalBar(msgspec.Struct, frozen=True):
    label: str
    actual: float | None
    target: float
    met: bool | None
    y: float
    width: float
    """The actual figure's bar."""
    goal_x: float
    """Where the target's line stands."""
    text: str


class GoalChart(msgspec.Struct, frozen=True):
    rows: list[GoalBar]
    width: int
    height: int
    left: int
    summary: str


GOAL_ROW = 28
GOAL_LEFT = 380
"""Room left of the goals' bars for their labels (a figure and whom it is for)."""
GOAL_LABEL = 56


def goal_bars(goals: Sequence[tuple[str, float | None, float, bool | None, str]], summary: str) -> GoalChart:
    """A bar per goal (label, actual, target, met, the text beside it), the target a line across it; each row on a
    scale of its own (a time and a percentage do not share one), so the line stands at 60 % of the row and the bar
    at the actual's share of that."""
    room = WIDTH - GOAL_LEFT - 20
    rows = []
    for index, (label, actual, target, met, text) in enumerate(goals):
        scale = target / 0.6 if target > 0 else max(actual or 0.0, 1.0)
        width = 0.0 if actual is None else min(room, room * actual / scale)
        label = label if len(label) <= GOAL_LABEL else label[:GOAL_LABEL - 1] + "…"
        rows.append(GoalBar(label, actual, target, met, index * GOAL_ROW + 6, round(width, 2),
                            round(GOAL_LEFT + room * min(1.0, target / scale), 2), text))
    return GoalChart(rows, WIDTH, max(1, len(rows)) * GOAL_ROW + 8, GOAL_LEFT, summary)


def _number(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"
