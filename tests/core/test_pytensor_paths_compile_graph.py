"""PyTensor's names at PyTensor's paths in ``opweave.graph``, ``opweave.compile``,
``opweave.link.vm`` and ``opweave.utils``: re-exports are the same objects, and the
additions behave as PyTensor's contract says."""

from __future__ import annotations

import struct
from itertools import count

import numpy as np
import pytest

import opweave
import opweave.tensor as pt
from opweave.compile import sharedvalue
from opweave.compile.debug.debugmode import BadOptimization as DebugBadOptimization
from opweave.compile.debug.debugmode import str_diagnostic
from opweave.compile.io import In
from opweave.compile.mode import AddFeatureOptimizer
from opweave.graph import features
from opweave.graph.basic import (
    Apply,
    Constant,
    NominalVariable,
    Variable,
    as_string,
    clone,
    clone_get_equiv,
    equal_computations,
)
from opweave.graph.fg import FunctionGraph
from opweave.graph.op import Op
from opweave.graph.type import Type, generic
from opweave.graph.utils import InconsistencyError
from opweave.link.lookup import available_linkers
from opweave.tensor.sharedvar import TensorSharedVariable

# ---------------------------------------------------------------------- toy Types and Ops


class Thing(Type):
    """A Type compared by its ``size``; ``Thing(0)`` is the widest (a supertype of all)."""

    def __init__(self, size: int = 1) -> None:
        self.size = size

    def filter(self, data, strict=False, allow_downcast=None):
        return data

    def __eq__(self, other):
        return type(other) is type(self) and other.size == self.size

    def __hash__(self):
        return hash((type(self), self.size))

    def __str__(self):
        return f"Thing{self.size}"


class WideThing(Thing):
    def is_super(self, other):
        return True if self.size == 0 else None


class Binary(Op):
    __props__ = ("name",)

    def __init__(self, name: str, destroy: bool = False) -> None:
        self.name = name
        if destroy:
            self.destroy_map = {0: [0]}

    def make_node(self, x, y):
        return Apply(self, [x, y], [Thing()()])

    def __str__(self):
        return self.name


class Unary(Op):
    __props__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def make_node(self, x):
        return Apply(self, [x], [Thing()()])

    def __str__(self):
        return self.name


plus, neg = Binary("plus"), Unary("neg")


def things(*names: str) -> list[Variable]:
    return [Thing()(name) for name in names]


# ---------------------------------------------------------------------- re-exports


def test_null_type_module_re_exports_the_graph_type() -> None:
    from opweave.graph import null_type as module
    from opweave.graph import type as type_module

    assert module.NullType is type_module.NullType
    assert module.null_type is type_module.null_type
    assert module.null_type == type_module.NullType("another reason")
    with pytest.raises(ValueError, match="no values may be assigned"):
        module.null_type.filter(1.0)


def test_link_vm_gives_the_installed_vm_linker() -> None:
    from opweave.link import vm

    assert vm.VMLinker is available_linkers()["vm"]
    with pytest.raises(ImportError, match="Mode\\(linker='vm'\\)"):
        vm.Stack  # noqa: B018 - the attribute access is what is tested


def test_utils_constants_and_helpers() -> None:
    from opweave import utils

    assert utils.LOCAL_BITWIDTH == struct.calcsize("P") * 8
    assert utils.PYTHON_INT_BITWIDTH == np.dtype("long").itemsize * 8
    assert utils.to_return_values([3]) == 3
    assert utils.to_return_values([3, 4]) == [3, 4]
    assert utils.from_return_values(3) == [3]
    assert utils.from_return_values((3, 4)) == (3, 4)
    assert utils.flatten([1, (2, [3, 4]), 5]) == [1, 2, 3, 4, 5]
    assert utils.uniq([3, 1, 3, 2, 1]) == [3, 1, 2]
    assert utils.difference([1, 2, 3, 2], [2]) == [1, 3]


# ---------------------------------------------------------------------- graph.basic


def test_as_string_marks_nodes_used_twice() -> None:
    x, y, z = things("x", "y", "z")
    inner = plus(x, y)
    assert as_string([x, y], [plus(inner, z)]) == ["plus(plus(x, y), z)"]
    assert as_string([x, y], [plus(inner, inner)]) == ["plus(*1 -> plus(x, y), *1)"]
    # the inputs cut the description: ``inner`` is a leaf when it is one of them
    assert as_string([inner], [neg(inner)], leaf_formatter=lambda v: "IN") == ["neg(IN)"]
    formatted = as_string([x], [neg(x)], node_formatter=lambda node, args: f"<{node.op}>")
    assert formatted == ["<neg>"]


def test_equal_computations_contract() -> None:
    a, b = pt.iscalar("a"), pt.iscalar("b")
    with pytest.raises(ValueError, match="same length"):
        equal_computations([a], [a, b])
    assert equal_computations([a + 1], [a + 1])
    assert not equal_computations([a + 1], [b + 1])
    assert equal_computations([a + 1], [b + 1], in_xs=[a], in_ys=[b])
    assert equal_computations([np.r_[2, 1]], [pt.as_tensor(np.r_[2, 1])])
    assert not equal_computations([np.r_[2, 1]], [a])
    c8 = pt.constant(np.array(3, dtype="int8"))
    c64 = pt.constant(np.array(3, dtype="int64"))
    assert not equal_computations([c8], [c64], strict_dtype=False)  # Types of other classes
    d = pt.dscalar("d")
    assert not equal_computations([d + c8], [d + c64])
    assert equal_computations([d + c8], [d + c64], strict_dtype=False)


def test_clone_keeps_constants_and_respects_memo() -> None:
    c = pt.constant(1.5)
    assert clone([c], [c]) == ([c], [c])
    x, y, z = pt.vector("x"), pt.vector("y"), pt.vector("z")
    a = x * y
    b = a + 1.0
    memo = {a: z}
    clone_get_equiv([x, y], [b], copy_inputs=False, copy_orphans=False, memo=memo)
    assert memo[a] is z and a.owner not in memo
    assert equal_computations([memo[b]], [z + 1.0])


def test_clone_with_new_inputs_rebuilds_for_a_more_specific_type() -> None:
    x = pt.tensor(dtype="float64", shape=(None,))
    y = pt.tensor(dtype="float64", shape=(1,))
    x1 = pt.tensor(dtype="float64", shape=(1,))
    assert pt.add(x, y).owner.clone_with_new_inputs([x1, y]).outputs[0].type.shape == (1,)
    node = pt.add(x1, y).owner.clone_with_new_inputs([x, y], strict=True)
    assert node.inputs[0].type.shape == (1,) and node.outputs[0].type.shape == (1,)


def test_nominal_variable_equals_and_auto_name_counter() -> None:
    assert NominalVariable(7, Thing(3)).equals(NominalVariable(7, Thing(3)))
    assert not NominalVariable(7, Thing(3)).equals(NominalVariable(8, Thing(3)))
    start = next(Variable.__count__)
    Variable.__count__ = count(start)
    first, second = things("p", "q")
    assert (first.auto_name, second.auto_name) == (f"auto_{start}", f"auto_{start + 1}")
    assert isinstance(pt.constant(2.0), Constant)


def test_type_convert_variable_and_clone() -> None:
    same, other = Thing(1)(), Thing(2)()
    assert Thing(1).convert_variable(same) is same
    assert Thing(1).convert_variable(other) is None
    with pytest.raises(NotImplementedError, match="wider Type"):
        Thing(1).convert_variable(WideThing(0)())
    assert Thing(1).clone() == Thing(1)
    assert Thing(1).clone(5) == Thing(5)


# ---------------------------------------------------------------------- graph.features


def test_bad_optimization_base_and_debugmode_subclass() -> None:
    old, new = things("old", "new")
    base = features.BadOptimization(old, new, 1.0, 2.0, "my_rewrite")
    assert (base.old_r, base.new_r, base.reason) == (old, new, "my_rewrite")
    assert "my_rewrite" in str(base) and "1.0" in str(base) and "2.0" in str(base)
    assert str(features.BadOptimization("just a message")) == "just a message"
    err = DebugBadOptimization(old, new, 1.0, 2.0, "my_rewrite")
    assert isinstance(err, features.BadOptimization)
    assert (err.old_r, err.new_r_val, err.reason) == (old, 2.0, "my_rewrite")
    assert "compute different values" in str(err)


def test_no_output_from_inplace_rejects_a_destroyed_output() -> None:
    x, y = things("x", "y")
    out = Binary("plus_inplace", destroy=True)(neg(x), y)
    fg = FunctionGraph([x, y], [out, neg(y)], clone=False)
    fg.attach_feature(features.DestroyHandler())
    fg.attach_feature(features.Validator())
    fg.attach_feature(features.NoOutputFromInplace([1]))
    fg.validate()  # output 1 is not computed in place
    guarded = FunctionGraph([x, y], [out], clone=False)
    guarded.attach_feature(features.DestroyHandler())
    guarded.attach_feature(features.Validator())
    guarded.attach_feature(features.NoOutputFromInplace([0]))
    with pytest.raises(InconsistencyError, match="protected from in-place"):
        guarded.validate()


def test_add_feature_optimizer_attaches_its_feature() -> None:
    x = pt.vector("x")
    fg = FunctionGraph([x], [pt.exp(x)])
    feature = features.NoOutputFromInplace([0])
    AddFeatureOptimizer(feature).rewrite(fg)
    assert feature in fg.features
    assert fg.outputs[0].owner.op == pt.exp(x).owner.op  # nothing rewritten


# ---------------------------------------------------------------------- compile


def test_sharedvalue_shared_dispatches_on_the_value() -> None:
    assert opweave.compile.shared is sharedvalue.shared
    arr = sharedvalue.shared(np.zeros((2, 3)), name="w")
    assert isinstance(arr, TensorSharedVariable) and arr.type.dtype == "float64"
    assert arr.name == "w"
    boxed = sharedvalue.shared([1, "a"], strict=True)
    assert type(boxed) is sharedvalue.SharedVariable and boxed.type == generic
    boxed.set_value("anything")
    assert boxed.get_value() == "anything"
    with pytest.raises(TypeError):
        sharedvalue.shared(7, bad_kw=False)
    with pytest.raises(TypeError, match="symbolic"):
        sharedvalue.shared(pt.scalar())


def test_in_rejects_an_update_of_another_type() -> None:
    with pytest.raises(TypeError, match="update must be of the variable's Type"):
        In(pt.dscalar("a"), value=0.0, update=pt.dvector("b"))


def test_str_diagnostic_describes_both_values() -> None:
    text = str_diagnostic(np.array([1.0, 2.0]), np.array([1.0, 2.5]), 1e-5, None)
    assert "expected" in text and "value" in text
    assert "max abs diff: 0.5" in text
    assert "rtol=1e-05" in text and "atol=default" in text


# ---------------------------------------------------------------------- OpFromGraph


def test_op_from_graph_newer_override_names() -> None:
    from opweave.compile.builders import OpFromGraph

    x = pt.dscalar("x")

    def doubled(inputs, outputs, output_grads):
        return [2.0 * output_grads[0]]

    op = OpFromGraph([x], [pt.sin(x)], pullback=doubled)
    assert op.pullback_overrides is doubled and op.lop_overrides is doubled
    grad_fn = opweave.function([x], opweave.grad(op(x), x))
    np.testing.assert_allclose(grad_fn(0.3), 2.0)  # the override, not cos(0.3)
    with pytest.raises(ValueError, match="lop_overrides and pullback are mutually exclusive"):
        OpFromGraph([x], [x], lop_overrides=doubled, pullback=doubled)
    with pytest.raises(ValueError, match="rop_overrides and pushforward"):
        OpFromGraph([x], [x], rop_overrides=doubled, pushforward=doubled)


def test_op_from_graph_fn_and_messages() -> None:
    from opweave.compile.builders import OpFromGraph

    x, y = pt.dscalar("x"), pt.dscalar("y")
    op = OpFromGraph([x, y], [x * y + 1.0])
    assert op.fn is op.fn
    np.testing.assert_allclose(op.fn(2.0, 3.0), [7.0])
    with pytest.raises(ValueError, match=r"Expected 2 input\(s\)"):
        op(x)
    with pytest.raises(ValueError, match="provided more than once as inputs"):
        OpFromGraph([x, x], [x + 1.0])
    with pytest.raises(TypeError, match="must be a list of Variables, got tuple"):
        OpFromGraph((x,), [x + 1.0])


# ---------------------------------------------------------------------- DebugMode


def test_debugmode_checks_a_given_graph_rewriter() -> None:
    from opweave.compile.debug.debugmode import DebugMode
    from opweave.graph.rewriting.basic import node_rewriter
    from opweave.graph.rewriting.db import EquilibriumDB

    @node_rewriter([pt.add])
    def add_becomes_sub(fgraph, node):
        if node.op == pt.add and node.inputs[1].owner is None:
            return [pt.sub(*node.inputs)]
        return False

    db = EquilibriumDB()
    db.register("add_becomes_sub", add_becomes_sub, "all")
    a, b = pt.dvector("a"), pt.dvector("b")
    f = opweave.function([a, b], a + b, mode=DebugMode(optimizer=db.query("+all")))
    with pytest.raises(features.BadOptimization) as info:
        f([1.0, 2.0], [3.0, 4.0])
    assert info.value.reason == "add_becomes_sub"


class TwoViews(Op):
    """Returns two undeclared views of one fresh array (a bug unless only graph outputs)."""

    def make_node(self, a):
        return Apply(self, [a], [a.type(), a.type()])

    def perform(self, node, inputs, outputs):
        doubled = inputs[0] * 2
        outputs[0][0] = doubled
        outputs[1][0] = doubled[1:]


def test_debugmode_aliased_outputs_and_pytensor_error_attributes() -> None:
    from opweave.compile.debug.debugmode import BadThunkOutput, BadViewMap, DebugMode

    x = pt.dvector("x")
    first, rest = TwoViews()(x)
    f = opweave.function([x], [first, rest], mode=DebugMode(check_preallocated_output=[]))
    got = f(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(got[0], [2.0, 4.0, 6.0])
    np.testing.assert_allclose(got[1], [4.0, 6.0])
    g = opweave.function([x], first + rest[0], mode=DebugMode(check_preallocated_output=[]))
    with pytest.raises(BadViewMap):  # both outputs read by a later node: a real bug
        g(np.array([1.0, 2.0, 3.0]))
    assert DebugMode(check_preallocated_output=["c_contiguous"]).check_preallocated_output == (
        "c_contiguous",
    )
    err = BadThunkOutput(first.owner, 1, "py", np.zeros(2), "c", np.ones(2), [np.ones(3)])
    assert err.r is rest and (err.thunk1, err.thunk2) == ("py", "c")
    np.testing.assert_array_equal(err.val2, np.ones(2))
    assert len(err.inputs_val) == 1 and err.str_diagnostic() == str(err)
