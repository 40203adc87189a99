"""`http/examples.http`, every request in order, against `inbox-actors serve --demo`, so the examples cannot go
stale: each must be answered as a reader pasting it would be (2xx, or the one answer its title promises).

What a reader pastes by hand, the test fills in the same way: the demo key and number from the ready line, the
simulator's port, the previous page's `next_cursor`. The receivers the examples name (`https://hooks.…`) become
one on this machine, since a test sends nothing off it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from tests.e2e.test_serve_process import start_serve, stop
from tests.webhook_receiver import webhook_receiver

EXAMPLES = Path(__file__).resolve().parents[2] / "http" / "examples.http"

# Requests whose point is an answer other than 2xx, by their title's start.
NOT_2XX = {
    # The demo workspace does not ask for approval, so its broadcast is scheduled, not waiting for one.
    "Broadcasts: approve one pending approval": 409,
}


@dataclass(frozen=True)
class Example:
    title: str
    method: str
    url: str
    headers: dict[str, str]
    body: str


def parse_examples(text: str) -> tuple[dict[str, str], list[Example]]:
    chunks = re.split(r"^###[ \t]*", text, flags=re.M)
    variables = dict(re.findall(r"^@(\w+)\s*=\s*(.*?)\s*$", chunks[0], re.M))
    examples = []
    for chunk in chunks[1:]:
        title, _, rest = chunk.partition("\n")
        lines = [line for line in rest.split("\n") if not line.startswith("#")]
        while lines and not lines[0].strip():
            lines.pop(0)
        if not lines:
            continue
        method, url = lines[0].split(maxsplit=1)
        head, _, body = "\n".join(lines[1:]).partition("\n\n")
        headers = dict(line.split(": ", 1) for line in head.splitlines() if line.strip())
        examples.append(Example(title.strip(), method, url.strip(), headers, body.strip()))
    return variables, examples


def days_from_now(match: re.Match) -> str:
    """The REST clients' `{{$datetime iso8601 N d}}`: now plus N days, in UTC."""
    moment = datetime.now(timezone.utc) + timedelta(days=int(match.group(1)))
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@pytest.mark.slow
async def test_every_example_request_is_answered_as_its_title_says(database_url, nursery):
    variables, examples = parse_examples(EXAMPLES.read_text())
    assert set(variables) == {"base", "key"}, variables
    request_lines = re.findall(r"^(?:GET|POST|PUT|PATCH|DELETE) ", EXAMPLES.read_text(), re.M)
    assert len(examples) == len(request_lines) > 40, "a request of the file was not parsed"

    async with webhook_receiver() as receiver:
        serve = await start_serve({"DATABASE_URL": database_url, "WEBHOOK_ALLOWED_NETWORKS": "127.0.0.0/8"},
                                  nursery, "--demo")
        ready = serve.ready
        fills = {"{{base}}": ready["url"], "{{key}}": ready["demo"]["key"],
                 "PLATFORM_PORT": str(urlsplit(ready["platform"]).port),
                 "PASTE_PHONE_NUMBER_ID": ready["demo"]["phone_number_id"]}
        try:
            async with httpx.AsyncClient(timeout=30) as client:
                # Enough customers waiting for a person that the first page of the list has a next page.
                for n in range(21):
                    asked = await client.post(
                        f"{ready['platform']}/simulator/customers/9198765{n:05d}/messages",
                        json={"phone_number_id": ready["demo"]["phone_number_id"],
                              "text": "Can I talk to a person?"})
                    assert asked.status_code == 200, asked.text

                last_answer: dict = {}
                for example in examples:
                    def fill(text: str) -> str:
                        for placeholder, value in fills.items():
                            text = text.replace(placeholder, value)
                        text = re.sub(r"\{\{\$datetime iso8601 (-?\d+) d\}\}", days_from_now, text)
                        text = text.replace("PASTE_NEXT_CURSOR", last_answer.get("next_cursor") or "")
                        return re.sub(r"https://hooks\.[\w.]+/[\w/]*", receiver.url, text)

                    answer = await client.request(
                        example.method, fill(example.url),
                        headers={name: fill(value) for name, value in example.headers.items()},
                        content=fill(example.body).encode() or None)
                    wanted = next((status for start, status in NOT_2XX.items() if example.title.startswith(start)),
                                  None)
                    ok = answer.status_code == wanted if wanted else answer.is_success
                    assert ok, f"{example.title or example.url}: {answer.status_code} {answer.text[:500]}"
                    if "PASTE_NEXT_CURSOR" in example.url:
                        assert "cursor=&" not in fill(example.url) + "&", "the page before had no next page"
                    if answer.headers.get("content-type", "").startswith("application/json"):
                        decoded = answer.json()
                        last_answer = decoded if isinstance(decoded, dict) else {}
        finally:
            assert await stop(serve) == 0, serve.stderr
