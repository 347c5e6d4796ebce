"""The ``opweave.plugins`` entry point of opweave-nplog."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from opweave.graph.op import Op
from opweave.link.implementations import ImplementationTable
from opweave.link.resolver import implementation_for
from opweave.plugins import hookimpl
from opweave_nplog.linker import NPLogLinker

LOGGER = logging.getLogger("opweave_nplog")


def _logged(node: Any, perform: Callable[..., None]) -> Callable[..., None]:
    """``perform`` that logs the node before running it."""
    label = str(node.op)

    def run(node: Any, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        LOGGER.info("nplog ran %s", label)
        perform(node, inputs, output_storage)

    return run


def _implementation_of(entry: Any, op: Any, node: Any) -> Any:
    """The ``py`` kernel of ``node``, logged; ``None`` (fall back) when there is none."""
    found = implementation_for(node, "py")
    return _logged(node, found.implementation) if found.what == "kernel" else None


#: One entry for every Op (through the MRO): the logged NumPy kernel.
TABLE = ImplementationTable("nplog", {Op: _implementation_of})


@hookimpl
def opweave_linkers() -> dict[str, type]:
    return {"nplog": NPLogLinker}


@hookimpl
def opweave_backend_info() -> dict[str, Any]:
    return {
        "name": "opweave-nplog",
        "linkers": ["nplog"],
        "available": True,
        "reason": None,
        "implementations": TABLE,
        "implementation_of": _implementation_of,
        "falls_back_to": "py",
    }


@hookimpl
def opweave_modes() -> dict[str, Any]:
    return {"NPLOG": {"linker": "nplog", "optimizer": "fast_run"}}


@hookimpl
def opweave_modules() -> dict[str, str]:
    return {"opweave.link.nplog": "opweave_nplog.linker"}
