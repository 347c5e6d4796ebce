"""The ``py`` linker: every node through its Python implementation, in order."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from opweave.graph.basic import Apply, Variable
from opweave.link.basic import Linker
from opweave_python.linkers.common import describe_failure, link_graph


class PerformLinker(Linker):
    """Run each node's ``perform`` one after the other; keep every value until the end."""

    name = "py"
    priority = 10

    def make_all(
        self,
        input_storage: list[list[Any]] | None = None,
        output_storage: list[list[Any]] | None = None,
        storage_map: dict[Variable, list[Any]] | None = None,
    ) -> tuple[Callable[[], Any], list[list[Any]], list[list[Any]], list[Any], list[Apply]]:
        """Link the accepted graph; see :meth:`opweave.link.basic.Linker.make_all`."""
        assert self.fgraph is not None, "call accept(fgraph) first"
        linked = link_graph(
            self.fgraph, self.no_recycling, input_storage, output_storage, storage_map, "py"
        )
        steps = list(zip(linked.thunks, linked.order, strict=True))
        smap = linked.storage_map

        def fn() -> None:
            for thunk, node in steps:
                try:
                    thunk()
                except Exception as exc:
                    describe_failure(exc, node, smap)
                    raise

        fn.storage_map = smap  # type: ignore[attr-defined]
        return fn, linked.input_storage, linked.output_storage, linked.thunks, linked.order
