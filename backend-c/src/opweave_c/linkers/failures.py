"""Explaining a failure of generated C: which input, node or output a label names."""

from __future__ import annotations

from typing import Any

from opweave.graph.basic import Apply, Variable
from opweave.link.loop import describe_failure


def explain(
    exc: BaseException,
    labels: dict[int, tuple[str, Any]],
    failcell: list[Any],
    storage_map: dict[Variable, list[Any]],
) -> tuple[str, Any] | None:
    """Note on ``exc`` what failed (for nodes, their inputs) and return ``(kind, what)``.

    ``kind`` is ``"input"``, ``"node"``, ``"output"``, ``"temp"`` or ``"sync"``; ``what``
    the variable or Apply node. Returns ``None`` when the failure was not in the block.
    """
    label = failcell[0]
    failcell[0] = 0
    found = labels.get(label) if isinstance(label, int) else None
    if found is None:
        return None
    kind, what = found
    if isinstance(what, Apply):
        describe_failure(exc, what, storage_map)
    elif kind != "input":
        exc.add_note(f"while handling {kind} {what} (type {what.type}) in generated C")
    return found
