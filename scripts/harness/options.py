"""The command-line options the scripts share, worded once, so that `--database-url` or `--small` means the same in
every script and reads the same in every --help."""

from __future__ import annotations

import argparse
from typing import Any

DATABASE_URL_HELP = ("a PostgreSQL server to use instead of the embedded one "
                     "(a database of its own is made there and dropped)")


def script_parser(doc: str) -> argparse.ArgumentParser:
    """The description is the docstring's first paragraph; --help keeps its line breaks."""
    return argparse.ArgumentParser(description=doc.split("\n\n")[0],
                                   formatter_class=argparse.RawDescriptionHelpFormatter)


def add_database_url(parser: argparse.ArgumentParser, help: str = DATABASE_URL_HELP) -> None:
    parser.add_argument("--database-url", help=help)


def fill_from_preset(args: argparse.Namespace, preset: dict[str, Any]) -> None:
    """Every option of the preset (--small's, or the full run's) that was not given takes the preset's value."""
    for name, value in preset.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
