"""The platform simulator (`inbox-actors simulator`) in a process of its own, as the real platform would be: the
service's CPU is then its own, and the simulator's record of what it accepted outlives a service that is killed.
Also what the scripts read back from it, and the customer numbers it treats as ordinary customers. With the AI
agent, the same in a process of its own that plays the agent's model too (SimulatorWithModel)."""

from __future__ import annotations

import os
import random
import secrets
import sys
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import trio

from harness.processes import cli_command, free_ports
from inbox_actors.model_simulator.grounded import MODEL_ID

# About a minute of status retries, as Meta retries: longer than a restart of the service.
STATUS_RETRIES = "0.5,1,2,4,8,15,30"


@dataclass(frozen=True)
class SeparateSimulator:
    """`inbox-actors simulator` in a process of its own, posting signed webhooks to the service's port as the real
    platform would; the secrets are made up for the run."""

    port: int
    service_port: int
    # Hex, not urlsafe: these travel on the simulator's command line, where a token starting with '-' would be
    # read as an option.
    app_secret: str = field(default_factory=lambda: secrets.token_hex(24))
    access_token: str = field(default_factory=lambda: secrets.token_hex(24))
    verify_token: str = field(default_factory=lambda: secrets.token_hex(24))

    @classmethod
    def on_free_ports(cls) -> SeparateSimulator:
        service_port, port = free_ports(2)
        return cls(port=port, service_port=service_port)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def command(self, *, from_environment: bool = True) -> list[str]:
        """With the status delays and throughput the built-in simulator would take from the environment (not with
        `from_environment` false: the crash checks set the simulator's pace themselves)."""
        command = [*cli_command(), "simulator", "--host", "127.0.0.1", "--port", str(self.port),
                   "--webhook-url", f"http://127.0.0.1:{self.service_port}/webhooks/whatsapp",
                   "--app-secret", self.app_secret, "--access-token", self.access_token]
        for option, name in (("--status-delays", "INBOX_SIMULATOR_STATUS_DELAYS"),
                             ("--throughput", "INBOX_SIMULATOR_THROUGHPUT")):
            if from_environment and os.environ.get(name):
                command += [option, os.environ[name]]
        return command

    def service_env(self) -> dict[str, str]:
        return {"WHATSAPP_API_URL": self.url, "WHATSAPP_ACCESS_TOKEN": self.access_token,
                "WHATSAPP_APP_SECRET": self.app_secret, "WHATSAPP_VERIFY_TOKEN": self.verify_token}


WITH_MODEL = Path(__file__).with_name("simulator_with_model.py")


@dataclass(frozen=True)
class SimulatorWithModel(SeparateSimulator):
    """The same, playing the AI agent's model too (harness/simulator_with_model.py), as the built-in simulator does:
    the service is pointed at it with INBOX_MODEL_URL and a made-up key, each model call taking `model_latency`
    seconds. `inbox-actors simulator` serves no model, and a service given WHATSAPP_API_URL starts none itself."""

    model_latency: float = 0.0
    model_key: str = field(default_factory=lambda: secrets.token_hex(24))

    @property
    def model_url(self) -> str:
        return f"{self.url}/model/v1"

    def command(self, *, from_environment: bool = True) -> list[str]:
        """The command's options, given to the file (-P: scripts/harness/ not first on its path, where its
        modules would shadow any of the same name)."""
        options = super().command(from_environment=from_environment)
        options = options[options.index("simulator") + 1:]
        return [sys.executable, "-P", str(WITH_MODEL), *options, "--model-key", self.model_key,
                "--model-latency", str(self.model_latency)]

    def service_env(self) -> dict[str, str]:
        return {**super().service_env(), "INBOX_MODEL_URL": self.model_url, "INBOX_MODEL": MODEL_ID,
                "INBOX_MODEL_KEY": self.model_key}


async def platform_record(simulator_url: str, phone_number_id: str) -> list[dict]:
    """Every send the simulator accepted for the number (it keeps --history of them)."""
    async with httpx.AsyncClient(base_url=simulator_url, timeout=30) as http:
        return (await http.get(f"/simulator/numbers/{phone_number_id}/messages")).json()["data"]


async def wait_statuses_posted(simulator: httpx.AsyncClient, patience: float, every: float) -> bool:
    """Until the simulator has posted (or dropped) every status it owes; False if it still owes some."""
    with trio.move_on_after(patience):
        while True:
            answer = await simulator.get("/simulator/stats")
            answer.raise_for_status()
            stats = answer.json()
            if stats["status_timelines_running"] == 0 and stats["statuses_queued"] == 0:
                return True
            await trio.sleep(every)
    return False


# -- customer numbers -----------------------------------------------------------------------------------------

REFUSED_PREFIXES = ("997", "998", "999")               # the simulator's refusing / failing numbers


def customer_phones(start: str, count: int) -> list[str]:
    """`count` numbers from `start` up, skipping those ending in 0 (the simulator turns their read receipts
    off). Raises ValueError for a base outside 7..15 digits, or a range reaching a refusing prefix."""
    if not (start.isascii() and start.isdigit() and 7 <= len(start) <= 15) or start.startswith("0"):
        raise ValueError(f"--start-phone must be 7 to 15 digits, not starting with 0: {start!r}")
    phones, number = [], int(start)
    while len(phones) < count:
        if number % 10:
            phones.append(str(number))
        number += 1
    bad = next((p for p in phones if len(p) != len(start) or p.startswith(REFUSED_PREFIXES)), None)
    if bad is not None:
        raise ValueError(f"--start-phone {start}: the range of {count} numbers reaches {bad} (numbers must keep "
                         "their length and not start with 997, 998 or 999)")
    return phones


def random_start_phone() -> str:
    return f"1555{random.randrange(9 * 10**6):07d}"   # fresh chats on each run; room for a million customers
