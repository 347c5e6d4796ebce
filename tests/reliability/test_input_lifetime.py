"""A compiled function keeps no reference to its caller's arrays after a call, not even
through an intermediate that is a view of one (``x.T``), whatever the linker and
whether it frees intermediates during the call (``allow_gc``) or keeps them.
"""

from __future__ import annotations

import gc
import sys
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave import config
from opweave.compile import Mode
from opweave.ifelse import ifelse

#: (linker, allow_gc): every linker, the loop linkers with and without freeing.
CASES = (
    ("py", True),
    ("vm", True),
    ("vm", False),
    ("c", True),
    ("cvm", True),
    ("cvm", False),
)
IDS = [f"{linker}-gc{int(gc_)}" for linker, gc_ in CASES]


def compile_(inputs: list[Any], outputs: Any, linker: str, allow_gc: bool, **kwargs: Any):
    with config.change_flags(allow_gc=allow_gc):
        return opweave.function(inputs, outputs, mode=Mode(linker=linker), **kwargs)


def assert_released(call: Callable[[np.ndarray], Any], make: Callable[[], np.ndarray]) -> Any:
    """Call ``call`` on a fresh array ``make()``; check the call added no reference to
    the array and that the array dies once dropped. Returns what the call returned."""
    value = make()
    assert value.base is None, "the array must own its memory"
    before = sys.getrefcount(value)
    out = call(value)
    assert sys.getrefcount(value) == before, "the function keeps a reference to its input"
    ref = weakref.ref(value)
    del value
    gc.collect()
    assert ref() is None, "the function keeps its input alive"
    return out


GRAPHS = {
    "transpose": (lambda x: x.T, lambda a: a.T),
    "transpose_then_add": (lambda x: x.T * 2.0 + 1.0, lambda a: a.T * 2.0 + 1.0),
    "two_views": (lambda x: x.T[::2] + x[:, 1:].T[1:], lambda a: a.T[::2] + a[:, 1:].T[1:]),
}


@pytest.mark.parametrize(("linker", "allow_gc"), CASES, ids=IDS)
@pytest.mark.parametrize("graph", sorted(GRAPHS))
def test_views_of_an_input_do_not_keep_it_alive(linker: str, allow_gc: bool, graph: str) -> None:
    build, reference = GRAPHS[graph]
    x = ot.matrix("x")
    f = compile_([x], build(x), linker, allow_gc)
    for _ in range(2):  # the second call runs with the storage the first one left
        expected = reference(np.arange(12.0).reshape(3, 4))
        out = assert_released(f, lambda: np.arange(12.0).reshape(3, 4).copy())
        np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize(("linker", "allow_gc"), CASES, ids=IDS)
def test_views_are_released_when_the_call_fails(linker: str, allow_gc: bool) -> None:
    x, y = ot.matrix("x"), ot.matrix("y")
    f = compile_([x, y], x.T + y, linker, allow_gc)
    b = np.ones((2, 2))

    def failing(a: np.ndarray) -> None:
        with pytest.raises(ValueError):
            f(a, b)

    assert_released(failing, lambda: np.ones((3, 4)))


@pytest.mark.parametrize(("linker", "allow_gc"), CASES, ids=IDS)
def test_profiled_function_releases_views(linker: str, allow_gc: bool) -> None:
    x = ot.matrix("x")
    f = compile_([x], x.T + 1.0, linker, allow_gc, profile=True)
    out = assert_released(f, lambda: np.ones((2, 3)))
    np.testing.assert_array_equal(out, np.full((3, 2), 2.0))


@pytest.mark.parametrize(
    ("linker", "allow_gc"),
    [case for case in CASES if case[0] != "c"],  # c has no lazy ifelse
    ids=[i for i, case in zip(IDS, CASES, strict=True) if case[0] != "c"],
)
def test_lazy_graph_releases_views(linker: str, allow_gc: bool) -> None:
    c, x = ot.iscalar("c"), ot.matrix("x")
    f = compile_([c, x], ifelse(c, x.T + 1.0, x.T * 3.0), linker, allow_gc)
    for cond, expected in ((1, np.full((3, 2), 3.0)), (0, np.full((3, 2), 6.0))):
        out = assert_released(lambda a, cond=cond: f(cond, a), lambda: np.full((2, 3), 2.0))
        np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize(("linker", "allow_gc"), [("vm", False), ("cvm", False)])
def test_outputs_not_aliasing_inputs_keep_their_storage(linker: str, allow_gc: bool) -> None:
    """Without freeing, an intermediate that is no view of an input keeps its memory
    between calls (what lets ``perform`` reuse it)."""
    x = ot.matrix("x")
    hidden = ot.exp(x.T)
    f = compile_([x], hidden.sum(), linker, allow_gc)
    a = np.ones((2, 3))
    np.testing.assert_allclose(f(a), np.exp(a).sum())
    storage = f.fn.storage_map
    kept = [storage[v][0] for v in storage if v.owner is not None and storage[v][0] is not None]
    assert kept, "every intermediate was emptied"
    assert not any(np.shares_memory(value, a) for value in kept)
