"""``python -m opweave.compat``: run a script or module with the pytensor alias on.

Usage::

    python -m opweave.compat SCRIPT [ARGS...]
    python -m opweave.compat -m MODULE [ARGS...]
    python -m opweave.compat -c CODE [ARGS...]

The alias is also set for child processes (``OPWEAVE_PYTENSOR_ALIAS=1``), so that tools that
start Python again (pytest-xdist, multiprocessing with ``spawn``) see it when they call
:func:`opweave.compat.alias_from_environment`.
"""

from __future__ import annotations

import os
import runpy
import sys

from opweave.compat.pytensor_alias import ENVIRONMENT_SWITCH, PyTensorAliasError, pytensor_alias

USAGE = (
    "usage: python -m opweave.compat SCRIPT [ARGS...]\n"
    "       python -m opweave.compat -m MODULE [ARGS...]\n"
    "       python -m opweave.compat -c CODE [ARGS...]"
)


def main(argv: list[str]) -> int:
    """Run what ``argv`` names with the alias on; the exit status for errors of our own."""
    if not argv or argv[0] in {"-h", "--help"}:
        print(USAGE, file=sys.stderr if not argv else sys.stdout)
        return 2 if not argv else 0
    if argv[0] in {"-m", "-c"} and len(argv) < 2:
        print(f"opweave.compat: {argv[0]} needs an argument\n{USAGE}", file=sys.stderr)
        return 2
    try:
        pytensor_alias()
    except PyTensorAliasError as error:
        print(f"opweave.compat: {error}", file=sys.stderr)
        return 1
    os.environ[ENVIRONMENT_SWITCH] = "1"
    if argv[0] == "-m":
        sys.argv = [argv[1], *argv[2:]]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    elif argv[0] == "-c":
        sys.argv = ["-c", *argv[2:]]
        exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__"})
    else:
        sys.argv = list(argv)
        sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
        runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
