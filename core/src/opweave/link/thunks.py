"""Building one node's thunk through whichever backend implements its Op."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from opweave.graph.basic import Apply, Variable
from opweave.graph.utils import NoImplementationError
from opweave.plugins.manager import get_plugin_manager


def make_thunk_through_plugins(
    op: Any,
    node: Apply,
    storage_map: dict[Variable, list[Any]],
    compute_map: dict[Variable, list[int]],
    no_recycling: Sequence[Variable],
    impl: str | None = None,
) -> Callable[[], Any]:
    """Ask the installed backends for a thunk of ``node``; raise if none has one.

    Raises
    ------
    NoImplementationError
        Naming the Op, the implementation asked for and the backends that were asked.
    """
    pm = get_plugin_manager()
    thunk: Callable[[], Any] | None = pm.hook.opweave_make_thunk(
        op=op,
        node=node,
        storage_map=storage_map,
        compute_map=compute_map,
        no_recycling=no_recycling,
        impl=impl,
    )
    if thunk is None:
        asked = [
            pm.get_name(impl_.plugin) or "?" for impl_ in pm.hook.opweave_make_thunk.get_hookimpls()
        ]
        which = f" with impl={impl!r}" if impl is not None else ""
        raise NoImplementationError(
            f"no installed backend implements {op} (node {node}){which}; backends asked: "
            f"{', '.join(asked) or 'none'}. Install a backend that provides it "
            "(pip install opweave-python for NumPy implementations of the core Ops)."
        )
    return thunk
