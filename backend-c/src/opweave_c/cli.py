"""Command line for the C backend's module cache: ``python -m opweave_c cache list|clear``."""

from __future__ import annotations

import argparse
import time

from opweave_c.cache import cache_for_config


def main(argv: list[str] | None = None) -> int:
    """Run the ``cache list`` / ``cache clear`` commands."""
    parser = argparse.ArgumentParser(prog="python -m opweave_c", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    cache = sub.add_parser("cache", help="manage the compiled-module cache")
    cache.add_argument("action", choices=["list", "clear"])
    args = parser.parse_args(argv)
    modules = cache_for_config()
    if args.action == "list":
        entries = modules.entries()
        print(f"{len(entries)} cached modules in {modules.root}")
        for entry in entries:
            meta = entry.meta
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(meta.get("created", 0)))
            what = meta.get("what", "(corrupt entry)")
            print(f"{entry.key[:16]}  {when}  {what[:90]}")
    else:
        print(f"removed {modules.clear()} cached modules from {modules.root}")
    return 0
