"""One agent of a working hour (harness/working_hour.py), working as agents do until the hour ends, on a page of
its own (harness/working_page.py): claiming chats from the queue (the Claim button or `c`), replying (one click, a
double click, two clicks 300 ms apart, Ctrl+Enter, or a click and Ctrl+Enter), writing notes, adding labels,
snoozing, resolving (the form or `e`), transferring, typing a draft in a chat and leaving for another without
sending it, and moving through the list with `j` / `k`.

Every reply, note and draft carries a token of its own (`wh-r1-4`: agent 1's fourth reply), so the records can
count it. While the agent types, the chat's customer may write (harness/working_customers.py), so that live
updates land in the chat being typed in.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from dataclasses import dataclass, field

from playwright.async_api import Browser
from playwright.async_api import Error as PlaywrightError

from harness.working_customers import Customers
from harness.working_page import AgentPage

REPLIES = ("Checking your order now.", "It arrives tomorrow.", "Address changed.", "Refund issued.", "Sorry!")
NOTES = ("Call back.", "Second time.", "VIP.", "Ask the warehouse.")
DRAFTS = ("I will check and", "Approved on", "The tracking says")
SENDS = ("click", "double-click", "two clicks 300 ms apart", "Ctrl+Enter", "click, then Ctrl+Enter")
# How often each action is chosen (one needing a chat of the agent's claims one when they hold none).
WEIGHTS = {"claim": 2, "reply": 6, "note": 1.5, "label": 1, "snooze": 1, "resolve": 1.5, "transfer": 1,
           "draft": 2, "move": 1.5}
# Each agent's first actions, so that even a short run leaves drafts and sends replies.
FIRST = ("claim", "reply", "draft")


@dataclass
class Sent:
    token: str
    phone: str
    how: str
    status: int | None           # the answer's HTTP status; None: none came


def _done(status: int | None, done: str) -> str:
    return done if status is not None and status < 300 else f"refused ({status})"


@dataclass
class Agent:
    number: int                  # 1, 2, 3…
    email: str
    name: str
    password: str
    labels: list[str]
    customers: Customers
    rng: random.Random
    at: AgentPage
    replies: list[Sent] = field(default_factory=list)
    notes: list[Sent] = field(default_factory=list)
    drafts: dict[str, str] = field(default_factory=dict)            # phone -> the draft left there, unsent
    draft_tokens: list[str] = field(default_factory=list)
    drafts_back: list[tuple[str, bool]] = field(default_factory=list)  # (phone, found) coming back to reply
    drafts_at_end: list[tuple[str, str | None, str | None, str]] = field(default_factory=list)
    actions: Counter = field(default_factory=Counter)
    stumbles: list[str] = field(default_factory=list)
    _counter: Counter = field(default_factory=Counter)

    async def start(self, browser: Browser, latency_ms: int) -> None:
        await self.at.sign_in(browser, self.email, self.password, latency_ms)

    async def work_until(self, deadline: float) -> None:
        loop = asyncio.get_running_loop()
        names, weights = list(WEIGHTS), list(WEIGHTS.values())
        first = list(FIRST)
        while loop.time() < deadline:
            name = first.pop(0) if first else self.rng.choices(names, weights)[0]
            try:
                self.actions[f"{name}: {await getattr(self, name)()}"] += 1
            except PlaywrightError as err:
                self.stumbles.append(f"{name}: {str(err).splitlines()[0][:160]}")
                try:   # back on the list, as an agent who lost their way would go
                    await self.at.go_to("/app/inbox?view=mine")
                except PlaywrightError as again:
                    self.stumbles.append(f"back to the list: {str(again).splitlines()[0][:160]}")
            await asyncio.sleep(self.rng.uniform(0.2, 0.8))

    def token(self, kind: str) -> str:
        self._counter[kind] += 1
        return f"wh-{kind}{self.number}-{self._counter[kind]}"

    async def mine(self) -> str | None:
        """One of the agent's chats, opened (None when they hold none): most often the one open, if it is theirs,
        as an agent goes on with the chat in front of them."""
        if self.rng.random() < 0.7 and await self.at.holds_open_chat(self.name):
            return await self.at.open_phone()
        await self.at.show_view("mine")
        rows = await self.at.rows()
        if not rows:
            return None
        phone = self.rng.choice(rows)
        await self.at.open_chat(phone)
        return phone

    # -- the actions (each says what came of it) ---------------------------------------------------------------

    async def claim(self) -> str:
        at = self.at
        await at.show_view("queue")
        rows = await at.rows()
        if not rows:
            return "queue empty"
        phone = self.rng.choice(rows[:5])
        await at.open_chat(phone)
        if not await at.has("#claim-button"):
            return "not offered"
        by_key = self.rng.random() < 0.5
        status = await at.submit("claim", phone, (lambda: at.press_key("c")) if by_key
                                 else (lambda: at.page.click("#claim-button")))
        return _done(status, "claimed")

    async def reply(self) -> str:
        at = self.at
        phone = await self.mine()
        if phone is None:
            return await self.claim()
        if not await at.has("#reply-text"):
            return "no reply box"
        if phone in self.drafts:   # a draft left here: it must be in the box (the reply then replaces it)
            self.drafts_back.append((phone, await at.page.input_value("#reply-text") == self.drafts.pop(phone)))
        token = self.token("r")
        if self.rng.random() < 0.5:
            self.customers.write_soon(phone, self.rng.uniform(0.1, 0.8))
        await at.type_into("reply-text", f"{self.rng.choice(REPLIES)} ({token})")
        how = self.rng.choice(SENDS)
        status = await at.submit("reply", phone,
                                 lambda: at.send_by(how, "#reply-form button[type=submit]", "reply-text"))
        self.replies.append(Sent(token, phone, how, status))
        return _done(status, "sent")

    async def note(self) -> str:
        at = self.at
        phone = await self.mine()
        if phone is None:
            return await self.claim()
        if not await at.has("#note-form"):
            return "no note form"
        await at.open_box("#note-box")
        token = self.token("n")
        await at.type_into("note-text", f"{self.rng.choice(NOTES)} ({token})")
        how = self.rng.choice(("click", "Ctrl+Enter"))
        status = await at.submit("note", phone, lambda: at.send_by(how, "#note-form button[type=submit]", "note-text"))
        self.notes.append(Sent(token, phone, how, status))
        return _done(status, "added")

    async def label(self) -> str:
        at = self.at
        phone = await self.mine()
        if phone is None:
            return await self.claim()
        if not await at.has("#label-box"):
            return "no labels offered"
        await at.open_box("#label-box")
        await at.page.select_option("#label-name", label=self.rng.choice(self.labels))
        return _done(await at.submit("label", phone, lambda: at.page.click("#label-box button[type=submit]")),
                     "labelled")

    async def snooze(self) -> str:
        at = self.at
        phone = await self.mine()
        if phone is None:
            return await self.claim()
        if not await at.has("#snooze-box"):
            return "not offered"
        await at.open_box("#snooze-box")
        await at.page.select_option("#snooze-until", self.rng.choice(("1h", "reply")))
        return _done(await at.submit("snooze", phone, lambda: at.page.click("#snooze-box button[type=submit]")),
                     "snoozed")

    async def resolve(self) -> str:
        at = self.at
        phone = await self.mine()
        if phone is None:
            return await self.claim()
        if not await at.has("#resolve-box"):
            return "not offered"
        if self.rng.random() < 0.5:
            return _done(await at.submit("resolve", phone, lambda: at.press_key("e")), "resolved by e")
        await at.open_box("#resolve-box")
        await at.page.fill("#resolve-reason", "Answered")
        return _done(await at.submit("resolve", phone, lambda: at.page.click("#resolve-box button[type=submit]")),
                     "resolved")

    async def transfer(self) -> str:
        at = self.at
        phone = await self.mine()
        if phone is None:
            return await self.claim()
        if not await at.has("#transfer-box"):
            return "not offered"
        await at.open_box("#transfer-box")
        options = await at.page.eval_on_selector_all(
            "#transfer-to option", "options => options.map((o) => [o.value, o.textContent.trim()])")
        others = [value for value, name in options if name != self.name]
        if not others:
            return "nobody to transfer to"
        await at.page.select_option("#transfer-to", self.rng.choice(others))
        await at.page.fill("#transfer-reason", "Shift change")
        return _done(await at.submit("transfer", phone,
                                     lambda: at.page.click("#transfer-box button[type=submit]")), "transferred")

    async def draft(self) -> str:
        """A draft typed in a chat, left unsent for another chat (its link clicked, or Enter on it)."""
        at = self.at
        rows = [phone for phone in await at.rows() if phone not in self.drafts]
        if len(rows) < 2:   # the view shown has too few chats: All open has more
            await at.show_view("open")
            rows = [phone for phone in await at.rows() if phone not in self.drafts]
        if len(rows) < 2:
            return "no room"
        phone = self.rng.choice(rows)
        await at.open_chat(phone)
        if not await at.has("#reply-text"):
            return "no reply box"
        token = self.token("d")
        text = f"{self.rng.choice(DRAFTS)} ({token})"
        if self.rng.random() < 0.5:
            self.customers.write_soon(phone, self.rng.uniform(0.1, 0.8))
        await at.type_into("reply-text", text)
        self.drafts[phone] = text
        self.draft_tokens.append(token)
        others = [other for other in await at.rows() if other != phone]
        if not others:
            return "typed, stayed"
        other = self.rng.choice(others)
        if self.rng.random() < 0.5:
            await at.page.click(f"#link-{other}")
        else:
            await at.page.focus(f"#link-{other}")
            await at.page.keyboard.press("Enter")
        await at.shows(other)
        return "typed, left"

    async def move(self) -> str:
        """j or k from the page, then a moment reading with the focus on the link it moved to."""
        at = self.at
        before = await at.open_phone()
        await at.press_key(self.rng.choice("jk"))
        for _ in range(100):
            now = await at.open_phone()
            if now != before and await at.has(f"#chat-pane[data-phone='{now}'] #chat-title"):
                break
            await asyncio.sleep(0.05)
        else:
            return "stayed"
        focused = await at.page.evaluate("() => document.activeElement ? document.activeElement.id : ''")
        if not focused.startswith("link-"):
            at.typing.append(f"moved from {before} to {now} by the keyboard: the focus is on {focused or 'the page'}")
            return "moved, focus elsewhere"
        await at.hold(focused)
        await asyncio.sleep(self.rng.uniform(0.5, 1.5))
        await at.release(focused)
        return "moved"

    # -- at the end: every draft still there --------------------------------------------------------------------

    async def check_drafts(self) -> None:
        """Each chat a draft was left in, found by the search and opened again, then reloaded: (phone, the box
        when opened, the box after the reload, the draft)."""
        at, page = self.at, self.at.page
        await at.settle()
        await at.take_watch()
        for phone, text in self.drafts.items():
            opened = reloaded = None
            try:
                await at.search(phone)
                await at.open_chat(phone)
                opened = await page.input_value("#reply-text")
                # htmx puts the chat's address in the history as the swap settles, a moment after the pane shows:
                # a reload before that would reload the list it came from.
                await page.wait_for_function("phone => location.pathname === '/app/chats/' + phone", arg=phone)
                await page.reload()
                await page.wait_for_selector(f"#chat-pane[data-phone='{phone}'] #reply-text")
                reloaded = await page.input_value("#reply-text")
            except PlaywrightError as err:
                self.stumbles.append(f"checking the draft in {phone}: {str(err).splitlines()[0][:160]}")
            self.drafts_at_end.append((phone, opened, reloaded, text))
