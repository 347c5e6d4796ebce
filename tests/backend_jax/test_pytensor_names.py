"""PyTensor's ``pytensor.link.jax`` names, served as ``opweave.link.jax`` by opweave-jax:
``JAXLinker``, ``dispatch.jax_funcify`` (graphs, nodes, overrides through the plugin
manager) and ``dispatch.jax_typify``."""

from __future__ import annotations

import importlib
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import jax
import numpy as np
import pytest

import opweave
import opweave.tensor as pt
from opweave.graph.basic import Apply
from opweave.graph.fg import FunctionGraph
from opweave.graph.op import Op
from opweave.graph.utils import NoImplementationError
from opweave.link.resolver import implementation_for
from opweave.plugins import OpweavePluginManager, create_plugin_manager, use_plugin_manager
from opweave.raise_op import Assert, CheckAndRaise
from opweave_jax.linker import JAXLinker
from opweave_jax.pytensor_link_jax.dispatch.overrides import LoweringOverride


@pytest.fixture
def pm() -> Iterator[OpweavePluginManager]:
    """A fresh process-wide plugin manager (installed plugins loaded), so that the
    registrations of a test end with it."""
    with use_plugin_manager(create_plugin_manager()) as fresh:
        yield fresh


def dispatch() -> Any:
    """``opweave.link.jax.dispatch``, imported through its opweave path."""
    return importlib.import_module("opweave.link.jax.dispatch")


def test_opweave_link_jax_is_the_backends_module() -> None:
    from opweave_jax import pytensor_link_jax

    link_jax: Any = importlib.import_module("opweave.link.jax")
    link_jax_linker: Any = importlib.import_module("opweave.link.jax.linker")

    assert link_jax is pytensor_link_jax
    assert link_jax.JAXLinker is JAXLinker is link_jax_linker.JAXLinker
    assert dispatch() is importlib.import_module("opweave_jax.pytensor_link_jax.dispatch")
    assert (
        dispatch().jax_funcify
        is importlib.import_module("opweave_jax.pytensor_link_jax.dispatch.basic").jax_funcify
    )


ALIASED = """
import sys
from opweave.compat import pytensor_alias
pytensor_alias()
from pytensor.link.jax import JAXLinker
print("jax" in sys.modules)
from pytensor.link.jax.dispatch import jax_funcify, jax_typify
import opweave.link.jax.dispatch as d
import opweave_jax.linker
print(JAXLinker is opweave_jax.linker.JAXLinker, jax_funcify is d.jax_funcify)
print("jax" in sys.modules)
"""


def test_pytensor_paths_under_the_alias_and_jax_imported_by_dispatch_only() -> None:
    done = subprocess.run(
        [sys.executable, "-c", ALIASED], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True", "True", "True"]


def test_graph_function_returns_a_tuple_of_the_outputs() -> None:
    jax_funcify = dispatch().jax_funcify
    x, y = pt.dvector("x"), pt.dmatrix("y")
    ex: Any = pt.exp(x)
    outs: list[Any] = [ex.sum() + y.sum(), (y * x).T, x[1:]]
    fn = jax_funcify(FunctionGraph([x, y], outs))
    py = opweave.function([x, y], outs, mode=opweave.Mode(linker="py", optimizer=None))
    xv, yv = np.array([0.5, -1.0, 2.0]), np.arange(6.0).reshape(2, 3)
    for got in (fn(xv, yv), jax.jit(fn)(xv, yv)):
        assert isinstance(got, tuple) and len(got) == 3
        for a, b in zip(got, py(xv, yv), strict=True):
            assert np.asarray(a).dtype == b.dtype
            np.testing.assert_allclose(np.asarray(a), b, rtol=1e-15)
    sqr: Any = pt.sqr(x)
    sumsq = sqr.sum()
    one = jax_funcify(FunctionGraph([x], [sumsq]), fgraph_name="sumsq")
    assert one.__name__ == "sumsq"
    (batched,) = jax.vmap(one)(np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(np.asarray(batched), [5.0, 50.0])


class Twice(Op):
    """An Op of this file: no backend's table lowers it."""

    __props__ = ()

    def make_node(self, x: Any) -> Apply:
        return Apply(self, [x], [x.type()])

    def perform(self, node: Apply, inputs: Any, output_storage: Any) -> None:
        output_storage[0][0] = inputs[0] * 2


def test_graph_function_refuses_a_node_without_lowering() -> None:
    x = pt.dvector("x")
    with pytest.raises(NoImplementationError, match=r"implements Twice.*for backend 'jax'"):
        dispatch().jax_funcify(FunctionGraph([x], [Twice().make_node(x).outputs[0]]))


def test_node_lowering_and_what_is_not_an_op() -> None:
    jax_funcify = dispatch().jax_funcify
    x = pt.dvector("x")
    log1p: Any = pt.log1p(x)
    node = log1p.owner
    lower = jax_funcify(node.op, node=node, storage_map={})
    np.testing.assert_allclose(np.asarray(lower(np.array([0.0, 1.0]))), [0.0, np.log(2.0)])
    with pytest.raises(TypeError, match="needs node="):
        jax_funcify(node.op)
    with pytest.raises(NotImplementedError, match="No JAX conversion for the given `Op`: 3"):
        jax_funcify(3)


def test_run_time_checks_raise_eagerly_and_are_skipped_with_a_warning_under_jit() -> None:
    x = pt.dvector("x")
    checked: Any = Assert("x > 0")(x * 2, pt.all(x > 0))
    fn = dispatch().jax_funcify(FunctionGraph([x], [checked]))
    np.testing.assert_array_equal(np.asarray(fn(np.ones(2))[0]), [2.0, 2.0])
    with pytest.raises(AssertionError, match="x > 0"):
        fn(-np.ones(2))
    with pytest.warns(UserWarning, match="Skipping the run-time check 'x > 0'"):
        (got,) = jax.jit(fn)(-np.ones(2))
    np.testing.assert_array_equal(np.asarray(got), [-2.0, -2.0])


def plus(k: float) -> Callable[..., Any]:
    """A lowering of a check: its value plus ``k``."""

    def funcify(op: Any, **kwargs: Any) -> Callable[..., Any]:
        return lambda value, *conds: value + k

    return funcify


def test_an_override_is_a_plugin_used_by_funcify_and_the_jax_linker(
    pm: OpweavePluginManager,
) -> None:
    jax_funcify = dispatch().jax_funcify
    x = pt.dvector("x")
    checked: Any = Assert("x > 0")(x, pt.all(x > 0))
    fn = jax_funcify.register(Assert)(plus(10.0))
    assert fn.__name__ == "funcify"
    overrides = [p for p in pm.get_plugins() if isinstance(p, LoweringOverride)]
    assert [o.op_class for o in overrides] == [Assert]
    resolution = implementation_for(checked.owner, "jax")
    assert resolution.origin == "plugin" and str(resolution.source).startswith("jax_funcify:")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the override replaces the check: no warning
        (got,) = jax.jit(jax_funcify(FunctionGraph([x], [checked])))(-np.ones(2))
    np.testing.assert_array_equal(np.asarray(got), [9.0, 9.0])
    f = opweave.function([x], checked, mode="JAX")
    np.testing.assert_array_equal(f(-np.ones(2)), [9.0, 9.0])
    # Other backends and Op classes are not affected.
    assert not str(implementation_for(checked.owner, "py").source).startswith("jax_funcify")
    ex: Any = pt.exp(x)
    assert implementation_for(ex.owner, "jax").origin == "table"


def test_overrides_end_with_their_plugin_manager() -> None:
    x = pt.dvector("x")
    checked: Any = Assert("x > 0")(x, pt.all(x > 0))
    with use_plugin_manager(create_plugin_manager()):
        dispatch().jax_funcify.register(Assert, plus(1.0))
        assert implementation_for(checked.owner, "jax").origin == "plugin"
    with use_plugin_manager(create_plugin_manager()):
        assert implementation_for(checked.owner, "jax").origin == "table"


def test_the_most_specific_and_then_the_latest_registration_wins(
    pm: OpweavePluginManager,
) -> None:
    jax_funcify = dispatch().jax_funcify
    x = pt.dvector("x")
    asserted: Any = Assert("a")(x, pt.all(x > 0))
    raised: Any = CheckAndRaise(ValueError, "c")(x, pt.all(x > 0))
    graph = FunctionGraph([x], [asserted, raised])
    ones = np.ones(2)
    jax_funcify.register(Assert, plus(1.0))
    jax_funcify.register(CheckAndRaise, plus(2.0))  # later, but less specific for Assert
    assert [float(v[0]) for v in jax_funcify(graph)(ones)] == [2.0, 3.0]
    jax_funcify.register(Assert)(plus(5.0))
    assert [float(v[0]) for v in jax_funcify(graph)(ones)] == [6.0, 3.0]
    lower = jax_funcify(asserted.owner.op)  # no node: the override is called without one
    assert float(lower(ones, True)[0]) == 6.0


def test_register_refuses_what_is_not_an_op_class(pm: OpweavePluginManager) -> None:
    jax_funcify = dispatch().jax_funcify
    with pytest.raises(TypeError, match="expects an Op class, got <class 'int'>"):
        jax_funcify.register(int, plus(1.0))
    with pytest.raises(TypeError, match="is not callable"):
        jax_funcify.register(Assert, 3)
    assert not [p for p in pm.get_plugins() if isinstance(p, LoweringOverride)]


def test_jax_typify() -> None:
    jax_typify = dispatch().jax_typify
    data = [1, 2]
    assert jax_typify(data) is data
    scalar = jax_typify(np.array(2.5))
    assert scalar == 2.5 and type(scalar) is float
    arr = jax_typify(np.arange(3), dtype="float32")
    assert isinstance(arr, jax.Array) and arr.dtype == np.float32
    assert np.asarray(jax_typify(3, dtype="int8")).dtype == np.int8
