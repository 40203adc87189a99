"""Where a py-spy profile of the service spends its samples: by layer (the trio-asyncio bridge, asyncpg, the actor
runtime, Quart/Hypercorn, httpx/httpcore, msgspec, trio, our code by module) and by function.

    py-spy record --pid PID --rate 100 --format raw --output profile.txt --duration 30
    .venv/bin/python scripts/profile_breakdown.py profile.txt [--top 15]

`--format raw` is one line per distinct stack: frames outermost first, `function (file:line)`, joined by `;`,
then the sample count. Two views:
- inclusive: the share of samples with at least one frame of the layer on the stack (a sample under the bridge
  that ends in asyncpg counts for both; the shares add up to more than 100%);
- self: each sample given to the innermost frame that belongs to a layer. Frames of what serves whoever calls
  it (h11, anyio, trio, asyncio, the standard library) are passed over, so h11 parsing and socket calls under
  Hypercorn are Quart/Hypercorn's, under httpcore the platform client's, asyncio's socket writes under asyncpg
  asyncpg's and asyncio's loop under trio_asyncio the bridge's; a stack with no such frame is trio's (the
  scheduler, epoll) or the leaf module's.
msgspec is C: without `py-spy --native` its time shows as the Python line that calls it (our encoders).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.profiles import read_profile


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("profile", type=Path, help="py-spy record --format raw output")
    parser.add_argument("--top", type=int, default=15, help="hot functions to list (15)")
    args = parser.parse_args(argv)
    print(read_profile(args.profile).report(args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
