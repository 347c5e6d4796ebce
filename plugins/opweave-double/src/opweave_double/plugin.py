"""The ``opweave.plugins`` entry point of opweave-double.

The Ops define ``perform`` themselves, so no implementation hook is needed;
what the plugin contributes is rewrites, registered like the core's own.
"""

from __future__ import annotations

from typing import Any

from opweave.plugins import hookimpl
from opweave_double.rewrites import remove_add_zero, remove_mul_one


@hookimpl
def opweave_rewrites(db: Any) -> None:
    """Register the neutral-element rewrites in the ``canonicalize`` phase (FAST_RUN)."""
    db["canonicalize"].register("double_remove_add_zero", remove_add_zero, "fast_run", "double")
    db["canonicalize"].register("double_remove_mul_one", remove_mul_one, "fast_run", "double")
