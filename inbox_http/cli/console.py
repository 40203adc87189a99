"""What every command shares: one JSON object on stdout, or an error on stderr and an exit status."""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

EXIT_FAILURE = 1
EXIT_BAD_ARGUMENTS = 2


def print_json(payload: Any) -> None:
    print(json.dumps(payload, default=str), flush=True)


def fail(message: str, status: int) -> NoReturn:
    print(f"inbox-actors: error: {message}", file=sys.stderr)
    sys.exit(status)


def comma_list(csv: str) -> list[str]:
    """`"a, b,,c"` as `["a", "b", "c"]`."""
    return [part for part in (p.strip() for p in csv.split(",")) if part]
