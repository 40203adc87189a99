"""Every relative link in README.md and docs/*.md leads somewhere: its file exists, and its #anchor is one that a
heading of the target page produces under GitHub's slug rules.

The docs are split into pages that link to each other by anchor; a heading renamed on one page silently breaks
links on another, and GitHub renders such a link without complaint. Links to other sites are not followed (no
network in unit tests).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
EXTERNAL = ("http://", "https://", "mailto:")

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
ATX_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
# An inline code span: a run of backticks, then anything up to the same run, within one paragraph.
CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)((?:(?!\n[ \t]*\n).)+?)(?<!`)\1(?!`)", re.DOTALL)
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^\s)]+)(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
REFERENCE_DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:[ \t]*(<[^>]*>|\S+)", re.MULTILINE)
HTML_ANCHOR = re.compile(r"<a\s[^>]*\b(?:id|name)\s*=\s*[\"']([^\"']+)[\"']", re.IGNORECASE)


def without_fences(text: str) -> str:
    """The text with every fenced code block's lines blanked (line numbers kept): links and headings inside code are
    examples, not part of the page."""
    kept, fence = [], None
    for line in text.split("\n"):
        opening = FENCE.match(line)
        if fence is None and opening:
            fence = opening.group(1)
            kept.append("")
        elif fence is not None:
            # A fence closes with the same character, at least as long, and nothing after it.
            stripped = line.strip()
            if stripped.startswith(fence[0] * len(fence)) and not stripped.strip(fence[0]):
                fence = None
            kept.append("")
        else:
            kept.append(line)
    return "\n".join(kept)


def without_code_spans(text: str) -> str:
    """Inline code replaced by spaces of the same length (newlines kept, so offsets still map to lines)."""
    return CODE_SPAN.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def heading_text(raw: str) -> str:
    """What GitHub makes a slug of: the rendered text, so link targets, images and emphasis markers go."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", raw)
    text = re.sub(r"<[^>]+>", "", text)
    return text


def slug(text: str) -> str:
    """GitHub's anchor for a heading: lowercased, punctuation other than `-` and `_` removed, each space a `-`."""
    text = heading_text(text).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def headings(text: str) -> Iterator[str]:
    lines = without_fences(text).split("\n")
    for number, line in enumerate(lines):
        atx = ATX_HEADING.match(line)
        if atx:
            yield atx.group(2) or ""
            continue
        # A setext heading underlines a paragraph line (a line of `-` after a blank line is a thematic break).
        if number and SETEXT_UNDERLINE.match(line):
            above = lines[number - 1]
            if above.strip() and not ATX_HEADING.match(above) and not above.lstrip().startswith(("-", "*", "|", ">")):
                yield above.strip()


def anchors(text: str) -> set[str]:
    """Every anchor a page offers: heading slugs, a repeat taking -1, -2, … in order, and explicit HTML anchors."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    for title in headings(text):
        base = slug(title)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    found.update(HTML_ANCHOR.findall(without_code_spans(without_fences(text))))
    return found


def links(text: str) -> Iterator[tuple[int, str]]:
    """(line, target) of every inline link, image and reference definition outside code."""
    text = without_code_spans(without_fences(text))
    for pattern in (INLINE_LINK, REFERENCE_DEFINITION):
        for match in pattern.finditer(text):
            target = match.group(1)
            if target.startswith("<") and target.endswith(">"):
                target = target[1:-1]
            yield text.count("\n", 0, match.start()) + 1, target


def broken_links(page: Path, anchor_cache: dict[Path, set[str]]) -> Iterator[str]:
    for line, target in links(page.read_text(encoding="utf-8")):
        if target.lower().startswith(EXTERNAL):
            continue
        path_part, _, anchor = target.partition("#")
        destination = (page.parent / unquote(path_part)).resolve() if path_part else page
        where = f"{page.relative_to(ROOT)}:{line}: ({target})"
        if not destination.exists():
            shown = destination.relative_to(ROOT) if destination.is_relative_to(ROOT) else destination
            yield f"{where} no such file: {shown}"
            continue
        if not anchor:
            continue
        if destination.suffix.lower() != ".md" or destination.is_dir():
            yield f"{where} an anchor into a file that is not a markdown page"
            continue
        if destination not in anchor_cache:
            anchor_cache[destination] = anchors(destination.read_text(encoding="utf-8"))
        if unquote(anchor) not in anchor_cache[destination]:
            yield f"{where} no heading of {destination.relative_to(ROOT)} makes the anchor #{anchor}"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_relative_links_resolve(page: Path) -> None:
    broken = list(broken_links(page, {}))
    assert not broken, "broken links:\n" + "\n".join(broken)


def test_slugs_follow_githubs_rules() -> None:
    # The cases the pages rely on: inline code, colons, slashes, commas and parentheses dropped; `-` and `_` kept.
    assert slug("Sending: `POST /api/send-message`") == "sending-post-apisend-message"
    assert slug("MCP: an AI assistant drives the inbox (`POST /api/mcp`)") == \
        "mcp-an-ai-assistant-drives-the-inbox-post-apimcp"
    assert slug("Exactly once, across crashes") == "exactly-once-across-crashes"
    assert slug("Team actions (full API, scope `inbox`)") == "team-actions-full-api-scope-inbox"
    assert slug("The actors' lifecycle") == "the-actors-lifecycle"
    assert slug("A broadcast to 100,000") == "a-broadcast-to-100000"
    assert slug("snake_case and kebab-case") == "snake_case-and-kebab-case"


def test_repeated_headings_take_numbered_anchors() -> None:
    # The heading inside the fence is an example, so it takes no number.
    page = "# Events\n\n## Events\n\n```\n# Events\n```\n\n### Events\n"
    assert anchors(page) == {"events", "events-1", "events-2"}


def test_links_in_code_are_not_checked() -> None:
    page = ("`[a](missing.md)` and ``[b](#x)``\n\n```md\n[c](#nowhere)\n```\n\n"
            "[d\ne](#here \"title\")\n\n[f]: other.md\n")
    assert sorted(links(page)) == [(7, "#here"), (10, "other.md")]
