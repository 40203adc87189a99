"""The bare Hypercorn-trio app the service is compared with, in a process of its own.

`python scripts/http_load.py --hello [--port 0]` serves an ASGI app on Hypercorn's trio worker that reads the body
and answers `{"hello":"world"}` to anything; it prints a ready line as the service does. `--hello quart` serves the
same answer from one Quart-Trio route instead: the floor of the service's framework.

scripts/bench_send.py and scripts/bench_broadcast.py start it here, so that its CPU is its own, and load it with
harness.load_client as they load the service; the app itself is harness.bare_app.
"""

from __future__ import annotations

import argparse

import trio
from harness.bare_app import serve_hello


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hello", nargs="?", const="asgi", choices=("asgi", "quart"),
                        help="serve the bare app (asgi, the default; or one Quart-Trio route) until interrupted")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    if not args.hello:
        parser.error("nothing to do: --hello serves the bare app")
    trio.run(serve_hello, args.port, args.hello)


if __name__ == "__main__":
    main()
