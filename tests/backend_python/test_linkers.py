"""The ``py`` and ``vm`` linkers of opweave-python."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
from opweave.compile import Mode
from opweave_double import add, double, mul
from opweave_python import PerformLinker, VMLinker


def chain():
    x, y = double("x"), double("y")
    a = add(x, y)
    b = mul(a, a)
    c = add(b, 1.0)
    return (x, y), (a, b, c)


def cells_of(f, variables):
    equiv = f.maker.fgraph.equiv
    return [f.fn.storage_map[equiv[v]] for v in variables]


def test_vm_frees_intermediates_after_their_last_client() -> None:
    (x, y), (a, b, c) = chain()
    with opweave.config.change_flags(allow_gc=True):
        f = opweave.function([x, y], c, mode=Mode(linker="vm", optimizer=None))
    assert f(1.0, 2.0) == 10.0
    assert [cell[0] for cell in cells_of(f, [a, b])] == [None, None]
    equiv = f.maker.fgraph.equiv
    assert [f.fn.compute_map[equiv[v]][0] for v in (a, b, c)] == [2, 2, 1]
    assert f.fn.allow_gc is True


def test_vm_without_gc_and_py_keep_intermediates() -> None:
    (x, y), (a, b, c) = chain()
    with opweave.config.change_flags(allow_gc=False):
        f = opweave.function([x, y], c, mode=Mode(linker="vm", optimizer=None))
    f(1.0, 2.0)
    assert [cell[0] for cell in cells_of(f, [a, b])] == [3.0, 9.0]
    g = opweave.function([x, y], c, mode=Mode(linker="py", optimizer=None))
    g(1.0, 2.0)
    assert [cell[0] for cell in cells_of(g, [a, b])] == [3.0, 9.0]


def test_outputs_are_fresh_each_call() -> None:
    from opweave_double import double_vector, hidden_buffer_add

    a, b = double_vector("a"), double_vector("b")
    for linker in ("py", "vm"):
        f = opweave.function([a, b], hidden_buffer_add(a, b), mode=Mode(linker=linker))
        first = f(np.ones(2), np.ones(2))
        second = f(np.zeros(2), np.zeros(2))
        assert first is not second
        np.testing.assert_allclose(first, 2.0)


@pytest.mark.parametrize("linker", ["py", "vm"])
def test_error_note_names_node_and_inputs(linker: str) -> None:
    from opweave_double import div

    x, y = double("x"), double("y")
    f = opweave.function([x, y], add(div(x, y), 1.0), mode=Mode(linker=linker))
    with pytest.raises(ZeroDivisionError) as info:
        f(1.0, 0.0)
    note = "\n".join(info.value.__notes__)
    assert "div(x, y)" in note and "input 1 (y, type double): float" in note
    assert f(1.0, 2.0) == 1.5  # the function still works afterwards


def test_linker_classes_and_priorities(plugin_manager) -> None:
    from opweave.link.lookup import available_linkers, resolve_linker

    plugin_manager.unregister(name="c")  # the Python backend alone
    linkers = available_linkers()
    assert linkers["py"] is PerformLinker and linkers["vm"] is VMLinker
    assert resolve_linker("auto") is VMLinker


def test_missing_implementation_is_a_compile_time_error() -> None:
    from opweave.graph import Apply, Op
    from opweave.graph.utils import NoImplementationError

    class NoImpl(Op):
        __props__ = ()

        def make_node(self, x):
            return Apply(self, [x], [double()])

    x = double("x")
    with pytest.raises(NoImplementationError, match=r"no installed backend implements NoImpl"):
        opweave.function([x], NoImpl()(x))
