"""Parts of PyTensor's surface that PyMC's samplers, variational fits and model transforms
use beyond the basic graph API: shared variables rebuilt around a container, tensors that
defer an operator to a foreign object, axes given as ranges, scalar random sizes,
``FunctionGraph``'s clone keywords, ``Function.get_shared`` and ``zeros_like``'s
dependence on its model."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import opweave
import opweave.tensor as pt
from opweave.compile.builders import OpFromGraph
from opweave.compile.sharedvalue import SharedVariable
from opweave.graph.basic import clone_get_equiv
from opweave.graph.fg import FunctionGraph
from opweave.tensor.random.type import RandomGeneratorType


class TestSharedVariableAroundAContainer:
    @pytest.mark.parametrize(
        "value", [np.arange(3.0), np.random.default_rng(3)], ids=["tensor", "generator"]
    )
    def test_deep_copy_of_the_container_gives_an_independent_variable(self, value):
        var = opweave.shared(value, name="v")
        rebuilt = type(var)(
            type=var.type,
            value=None,
            strict=None,
            container=copy.deepcopy(var.container),
            name=var.name,
        )
        assert rebuilt.type == var.type and rebuilt.name == "v"
        assert rebuilt.container is not var.container
        if isinstance(value, np.ndarray):
            rebuilt.set_value(np.ones(3))
            np.testing.assert_array_equal(var.get_value(), np.arange(3.0))
            np.testing.assert_array_equal(rebuilt.get_value(), np.ones(3))
        else:
            first = var.get_value().normal()
            assert rebuilt.get_value().normal() == first

    def test_a_function_reads_the_given_container(self):
        var = opweave.shared(np.arange(3.0), name="v")
        rebuilt = type(var)(
            type=var.type, value=None, strict=None, container=copy.deepcopy(var.container)
        )
        f = opweave.function([], rebuilt * 2, updates={rebuilt: rebuilt + 1})
        np.testing.assert_array_equal(f(), [0.0, 2.0, 4.0])
        np.testing.assert_array_equal(rebuilt.get_value(), [1.0, 2.0, 3.0])
        np.testing.assert_array_equal(var.get_value(), [0.0, 1.0, 2.0])

    def test_value_or_strict_with_a_container_is_refused(self):
        var = opweave.shared(np.arange(3.0), name="v")
        with pytest.raises(TypeError, match="value and strict must be None"):
            SharedVariable(var.type, np.zeros(3), strict=None, container=var.container)
        with pytest.raises(TypeError, match="value and strict must be None"):
            SharedVariable(var.type, None, strict=True, container=var.container)
        with pytest.raises(TypeError, match="container must be a Container"):
            SharedVariable(var.type, None, strict=None, container=[np.zeros(3)])


class _Covariance:
    """A foreign object with reflected operators (as PyMC's covariance functions)."""

    def __init__(self, scale=1.0):
        self.scale = scale

    def __rmul__(self, other):
        return ("scaled", other)

    def __radd__(self, other):
        return ("shifted", other)


class TestOperatorsDeferToForeignObjects:
    def test_reflected_operator_of_the_other_object_runs(self):
        x = pt.dscalar("x")
        squared = x**2
        assert x * _Covariance() == ("scaled", x)
        assert squared + _Covariance() == ("shifted", squared)

    def test_without_a_reflected_operator_python_raises_type_error(self):
        x = pt.dvector("x")
        with pytest.raises(TypeError, match="unsupported operand type"):
            x - object()

    def test_numbers_arrays_and_lists_still_build_graphs(self):
        x = pt.dvector("x")
        f = opweave.function([x], [x * 2, x + np.ones(2), x - [1.0, 2.0], 3 / x])
        results = f([1.0, 4.0])
        np.testing.assert_array_equal(results[0], [2.0, 8.0])
        np.testing.assert_array_equal(results[1], [2.0, 5.0])
        np.testing.assert_array_equal(results[2], [0.0, 2.0])
        np.testing.assert_array_equal(results[3], [3.0, 0.75])


def test_reduction_and_squeeze_axes_given_as_a_range():
    x = pt.tensor("x", shape=(None, 1, None))
    value = np.arange(6.0).reshape(2, 1, 3)
    f = opweave.function([x], [x.sum(range(1, 3)), x.squeeze(range(1, 2))])
    total, squeezed = f(value)
    np.testing.assert_array_equal(total, value.sum(axis=(1, 2)))
    np.testing.assert_array_equal(squeezed, value.squeeze(1))


def test_a_scalar_symbolic_size_is_a_one_entry_size():
    n = pt.lscalar("n")
    rng = opweave.shared(np.random.default_rng(0))
    draws = pt.random.normal(0.0, 1.0, size=n * 2, rng=rng)
    assert draws.type.ndim == 1
    f = opweave.function([n], draws)
    assert f(3).shape == (6,)
    fixed = pt.random.normal(0.0, 1.0, size=np.array(4, dtype="int64"), rng=rng)
    assert fixed.type.shape == (4,)


class TestFunctionGraphCloneKeywords:
    def test_memo_entries_are_respected_and_completed(self):
        x, y = pt.dscalars("x", "y")
        out = pt.exp(x) + y
        stand_in = pt.dscalar("x2")
        memo = {x: stand_in}
        fg = FunctionGraph([x, y], [out], memo=memo)
        assert fg.inputs[0] is stand_in
        assert memo[out] is fg.outputs[0]

    def test_clone_inner_graphs_copies_the_inner_graph_of_an_op(self):
        a = pt.dscalar("a")
        inner = OpFromGraph([a], [a * 2])
        x = pt.dscalar("x")
        out = inner(x)
        shared = FunctionGraph([x], [out])
        copied = FunctionGraph([x], [out], clone_inner_graphs=True)
        assert shared.outputs[0].owner.op is inner
        new_op = copied.outputs[0].owner.op
        assert new_op is not inner and isinstance(new_op, OpFromGraph)
        assert new_op.inner_outputs[0] is not inner.inner_outputs[0]
        f = opweave.function(copied.inputs, copied.outputs[0], mode="FAST_COMPILE")
        assert f(1.5) == 3.0

    def test_clone_inner_graphs_copies_a_scan(self):
        x = pt.dvector("x")
        ys, _ = opweave.scan(lambda v: v * 2, sequences=[x])
        equiv = clone_get_equiv([x], [ys], clone_inner_graphs=True)
        old_scan = next(v.owner.op for v in opweave.graph.basic.ancestors([ys]) if v.owner and
                        type(v.owner.op).__name__ == "Scan")  # fmt: skip
        new_nodes = [k for k in equiv.values() if hasattr(k, "op") and k.op is not None]
        new_scans = [n.op for n in new_nodes if type(n.op).__name__ == "Scan"]
        assert new_scans and all(op is not old_scan for op in new_scans)
        assert new_scans[0].inner_outputs[0] is not old_scan.inner_outputs[0]
        f = opweave.function([equiv[x]], equiv[ys])
        np.testing.assert_array_equal(f([1.0, 2.0]), [2.0, 4.0])


def test_get_shared_lists_what_the_function_reads_and_updates():
    w = opweave.shared(np.ones(2), name="w")
    rng = opweave.shared(np.random.default_rng(1), name="rng")
    x = pt.dvector("x")
    draw = pt.random.normal(size=2, rng=rng)
    f = opweave.function([x], x * w + draw, updates={w: w * 2})
    found = f.get_shared()
    assert set(found) == {w, rng} | set(found) and w in found and rng in found
    rngs = [v for v in found if isinstance(v.type, RandomGeneratorType)]
    replacement = opweave.shared(np.random.default_rng(1), borrow=True)
    g = f.copy(swap={rngs[0]: replacement})
    assert replacement in g.get_shared() and rngs[0] not in g.get_shared()


class TestZerosLike:
    @pytest.mark.parametrize("shape", [(), (3,), (2, 2)])
    def test_a_function_of_its_model_uses_the_model(self, shape):
        x = pt.tensor("x", shape=shape)
        f = opweave.function([x], [pt.zeros_like(x), pt.ones_like(x, dtype="int32")])
        zeros, ones = f(np.full(shape, 7.0))
        np.testing.assert_array_equal(zeros, np.zeros(shape))
        assert ones.dtype == np.int32 and np.all(ones == 1)

    def test_disconnected_gradient_keeps_the_input_used(self):
        x, y = pt.dscalar("x"), pt.tensor("y", shape=(3,))
        grads = opweave.grad(x * 2, [x, y], disconnected_inputs="ignore")
        f = opweave.function([x, y], grads)
        gx, gy = f(1.0, np.ones(3))
        assert gx == 2.0
        np.testing.assert_array_equal(gy, np.zeros(3))

    def test_opt_gives_the_constant_for_a_scalar_of_the_same_type(self):
        x = pt.dscalar("x")
        z = pt.zeros_like(x, opt=True)
        assert isinstance(z, opweave.graph.basic.Constant) and z.data == 0.0
        v = pt.dvector("v")
        assert not isinstance(pt.ones_like(v, opt=True), opweave.graph.basic.Constant)
