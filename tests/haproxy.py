"""The HAProxy that runs the example configuration of docs/nodes.md (tests/e2e/test_haproxy_example.py).

Like the browser tests' Chromium (tests/browser.py), it is never a reason to skip: `scripts/test` makes sure there is
one first (`scripts/haproxy`: Debian's `haproxy` package as root, the same package unpacked into .venv/share/haproxy
as anyone else), and a run that still has none fails with the way to get one. Standard library only: scripts/haproxy
asks this module before the test tools are installed.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

# Where scripts/haproxy unpacks Debian's package without root; `haproxy` there runs it with its libraries.
UNPACKED = Path(__file__).resolve().parents[1] / ".venv" / "share" / "haproxy" / "haproxy"

HOW_TO_GET_ONE = (
    "the HAProxy example's test (tests/e2e/test_haproxy_example.py) needs HAProxy and none was found: run "
    "scripts/haproxy (as root it installs Debian's `haproxy` package, as another user it unpacks that package into "
    ".venv/share/haproxy; scripts/test runs it), or `sudo apt-get install haproxy`, or point INBOX_TEST_HAPROXY at "
    "an haproxy binary")


def find_haproxy() -> str | None:
    """INBOX_TEST_HAPROXY, else an haproxy on PATH or in /usr/sbin (where Debian puts it, off a normal user's PATH),
    else the one scripts/haproxy unpacked."""
    chosen = os.environ.get("INBOX_TEST_HAPROXY")
    if chosen:
        return chosen
    if found := shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin"):
        return found
    return str(UNPACKED) if os.access(UNPACKED, os.X_OK) else None
