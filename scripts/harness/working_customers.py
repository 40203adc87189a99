"""The customers of a working hour (harness/working_hour.py) and what the records say afterwards.

Customers write through the simulator's control API (`POST /simulator/customers/{phone}/messages`), each message
carrying a token of its own (`wh-c7-3`: customer 7's third message), at random times (a Poisson stream over all of
them), and also on cue: while an agent types in a chat, that chat's customer may write, so that a live update
lands in the chat being typed in.

Afterwards the records are read back: what the platform received from the business number for each customer
(`GET /simulator/numbers/{id}/messages?to=PHONE`) and each chat's thread as the service keeps it (the Reporting
API's `GET /api/reporting/v1/conversations/{phone}/messages`, notes included), counted by token.
"""

from __future__ import annotations

import asyncio
import random
import re
from collections import Counter
from dataclasses import dataclass, field

import httpx

TOKEN = re.compile(r"\bwh-[crnd]\d+-\d+\b")
FIRST_WORDS = "Can I talk to a person?"        # the FAQ bot hands the chat to the team
LINES = (
    "Where is my order?", "Any news on the delivery?", "The parcel has not arrived yet.", "Can I change the address?",
    "Is cash on delivery possible?", "I was charged twice.", "Hello? Still there?", "Thanks, and the invoice?",
    "The box was damaged.", "Can you call me back after 6 pm?",
)
NAMES = "Asha Bilal Chen Dana Esra Farid Gita Hugo Ines Jonas Kiko Lena Milo Nour Omar Pia Ravi Sami Tara Uma".split()
AT_ONCE = 8                                    # customers' calls to the simulator in flight at once


@dataclass
class Written:
    phone: str
    token: str
    delivered: bool | None                     # the service took it (the simulator says); None: no answer


class Customers:
    """The simulated customers: who they are, what each wrote and whether the service took it."""

    def __init__(self, http: httpx.AsyncClient, simulator_url: str, number: str, phones: list[str],
                 rng: random.Random, gap_seconds: float) -> None:
        self.http, self.simulator_url, self.number, self.phones = http, simulator_url, number, phones
        self.rng, self.gap_seconds = rng, gap_seconds
        self.names = {phone: f"{NAMES[i % len(NAMES)]} {i + 1}" for i, phone in enumerate(phones)}
        self.written: list[Written] = []
        self._said: Counter[str] = Counter()
        self._limit = asyncio.Semaphore(AT_ONCE)
        self._pending: set[asyncio.Task] = set()

    async def write(self, phone: str, words: str | None = None) -> None:
        self._said[phone] += 1
        token = f"wh-c{self.phones.index(phone) + 1}-{self._said[phone]}"
        text = f"{words or self.rng.choice(LINES)} ({token})"
        delivered: bool | None = None
        async with self._limit:
            try:
                answer = await self.http.post(f"{self.simulator_url}/simulator/customers/{phone}/messages", json={
                    "phone_number_id": self.number, "text": text, "name": self.names[phone]}, timeout=30)
                delivered = answer.status_code == 200 and bool(answer.json().get("delivered_to_service"))
            except (httpx.HTTPError, ValueError):
                delivered = None
        self.written.append(Written(phone, token, delivered))

    async def ask_for_people(self) -> None:
        """Every customer asks for a person: the chats wait in the team's queue."""
        await asyncio.gather(*(self.write(phone, FIRST_WORDS) for phone in self.phones))

    def write_soon(self, phone: str, after: float) -> None:
        """The customer writes `after` seconds from now (while an agent types in their chat, say)."""
        task = asyncio.create_task(self._later(phone, after))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def _later(self, phone: str, after: float) -> None:
        await asyncio.sleep(after)
        await self.write(phone)

    async def chat_until(self, deadline: float) -> None:
        """Messages at random times, each customer about once every `gap_seconds`, until the deadline."""
        loop = asyncio.get_running_loop()
        rate = len(self.phones) / self.gap_seconds
        while True:
            pause = self.rng.expovariate(rate)
            if loop.time() + pause >= deadline:
                return
            await asyncio.sleep(pause)
            self.write_soon(self.rng.choice(self.phones), 0)

    async def settle(self) -> None:
        """Until every message started has had its answer."""
        while self._pending:
            await asyncio.gather(*list(self._pending), return_exceptions=True)


@dataclass
class Records:
    """Tokens counted in what the platform received (`sent`) and in the service's threads (`kept`)."""

    sent: Counter[str] = field(default_factory=Counter)
    kept: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)


def _tokens(text: str | None) -> list[str]:
    return TOKEN.findall(text or "")


async def read_records(http: httpx.AsyncClient, url: str, simulator_url: str, number: str, key: str,
                       phones: list[str]) -> Records:
    records = Records()
    for phone in phones:
        answer = await http.get(f"{simulator_url}/simulator/numbers/{number}/messages", params={"to": phone},
                                timeout=30)
        if answer.status_code != 200:
            records.problems.append(f"simulator's record of {phone}: {answer.status_code}")
            continue
        for message in answer.json()["data"]:
            records.sent.update(_tokens(message.get("text")))
        cursor: str | None = None
        while True:
            params = {"limit": "200", **({"cursor": cursor} if cursor else {})}
            answer = await http.get(f"{url}/api/reporting/v1/conversations/{phone}/messages", params=params,
                                    headers={"Authorization": f"Bearer {key}"}, timeout=30)
            if answer.status_code != 200:
                records.problems.append(f"the service's thread of {phone}: {answer.status_code} {answer.text[:200]}")
                break
            page = answer.json()
            for message in page["data"]:
                records.kept.update(_tokens(message.get("text")))
            cursor = page.get("next_cursor")
            if not cursor:
                break
    return records
