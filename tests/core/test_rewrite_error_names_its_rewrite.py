"""A node rewrite that raises stops the rewriting (``config.on_opt_error`` is ``raise``),
and its error says which rewrite failed on which node."""

from __future__ import annotations

import pytest

import opweave.tensor as ot
from opweave.graph.fg import FunctionGraph
from opweave.graph.rewriting import in2out, node_rewriter
from opweave.tensor.elemwise import Elemwise


@node_rewriter([Elemwise])
def broken_rewrite(fgraph, node):
    raise RuntimeError("boom")


def test_the_error_is_raised_with_a_note_naming_rewrite_and_node() -> None:
    x = ot.dscalar("x")
    fgraph = FunctionGraph([x], [ot.exp(x)], clone=False)
    with pytest.raises(RuntimeError, match="boom") as info:
        in2out(broken_rewrite).rewrite(fgraph)
    notes = getattr(info.value, "__notes__", [])
    assert len(notes) == 1
    assert "broken_rewrite" in notes[0] and "Exp" in notes[0]
