"""Compile time of the small elementwise graph in this (fresh) process, for ``run.py``.

Usage::

    OPWEAVE_FLAGS=compiledir=/some/dir python benchmarks/compile_probe.py cvm

Prints one JSON object: ``{"seconds": ..., "import_seconds": ...}`` (compiling plus the
first call; importing opweave), or ``{"error": "no C for ..."}``.
"""

from __future__ import annotations

import json
import sys
import time

_START = time.perf_counter()

import opweave_side  # noqa: E402

IMPORT_SECONDS = time.perf_counter() - _START


def main(argv: list[str]) -> int:
    """Time compiling with the linker named in ``argv[0]`` and print the JSON result."""
    start = time.perf_counter()
    try:
        opweave_side.compile_and_call_once(argv[0])
    except Exception as exc:
        print(json.dumps({"error": opweave_side.why_not(exc)}))
        return 0
    seconds = time.perf_counter() - start
    print(json.dumps({"seconds": seconds, "import_seconds": IMPORT_SECONDS}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
