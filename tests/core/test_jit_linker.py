"""``JITLinker`` (PyTensor's whole-graph linker contract) and ``graph_function``.

A linker written on the base implements ``fgraph_convert`` and ``jit_compile`` only. The
one here converts each node to a call of its Python kernel (``graph_function``) and
"compiles" by counting; it runs through ``opweave.function`` like any linker.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as pt
from opweave.compile import Mode
from opweave.graph.basic import Apply, Variable
from opweave.graph.fg import FunctionGraph
from opweave.link.basic import JITLinker, graph_function
from opweave.link.thunks import make_node_thunk


def _python_kernel(node: Apply) -> Callable[..., Any]:
    """A function of the node's input values running its ``py`` kernel."""
    cells: dict[Variable, list[Any]] = {v: [None] for v in [*node.inputs, *node.outputs]}
    computed = {v: [0] for v in cells}
    thunk = make_node_thunk(node, cells, computed, [], ["py"], lazy=False)

    def run(*values: Any) -> Any:
        for var, value in zip(node.inputs, values, strict=True):
            cells[var][0] = value
        thunk()
        results = [cells[v][0] for v in node.outputs]
        return results if len(results) > 1 else results[0]

    return run


class CountingJIT(JITLinker):
    """Python kernels, one converted function, ``jit_compile`` counted."""

    name = "counting-jit"
    compiled = 0

    def fgraph_convert(
        self,
        fgraph: FunctionGraph,
        input_storage: list[list[Any]],
        storage_map: dict[Variable, list[Any]],
        **kwargs: Any,
    ) -> Callable[..., Any]:
        return graph_function(fgraph, kwargs["order"], _python_kernel)

    def jit_compile(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        type(self).compiled += 1
        return fn

    def output_filter(self, var: Variable, out: Any) -> Any:
        return np.asarray(out, dtype=var.type.dtype)


def test_a_linker_on_the_base_runs_a_function_with_updates() -> None:
    x, y = pt.dvector("x"), pt.dmatrix("y")
    acc = opweave.shared(np.zeros(3), name="acc")
    top, where = pt.max_and_argmax(y, axis=1)  # a node of two outputs
    outs = [pt.exp(x) * 2.0 + top, where, pt.constant(np.arange(3.0))]
    before = CountingJIT.compiled
    f = opweave.function(
        [x, y], outs, updates=[(acc, acc + x)], mode=Mode(linker=CountingJIT(), optimizer=None)
    )
    assert CountingJIT.compiled == before + 1
    xv, yv = np.array([0.0, 1.0, -2.0]), np.array([[1.0, 5.0], [7.0, 2.0], [0.5, 0.25]])
    first, index, constant = f(xv, yv)
    np.testing.assert_allclose(first, np.exp(xv) * 2.0 + yv.max(axis=1))
    np.testing.assert_array_equal(index, yv.argmax(axis=1))
    np.testing.assert_array_equal(constant, np.arange(3.0))
    f(xv, yv)
    np.testing.assert_array_equal(acc.get_value(), 2 * xv)
    assert CountingJIT.compiled == before + 1  # compiled once, called twice


def test_the_base_says_what_a_subclass_must_define() -> None:
    x = pt.dvector("x")
    with pytest.raises(NotImplementedError, match=r"JITLinker\.fgraph_convert is not defined"):
        opweave.function([x], x + 1.0, mode=Mode(linker=JITLinker(), optimizer=None))
