"""``opweave.function``: the documented semantics, argument checking, In/Out, updates, givens."""

from __future__ import annotations

import pytest

import opweave
from opweave.compile import In, Out, SharedVariable, UnusedInputError
from opweave.graph import Constant, MissingInputError
from opweave.link.lookup import LinkerNotFoundError
from opweave_double import add, double, mul, sub


@pytest.fixture
def xyz():
    return double("x"), double("y"), double("z")


def test_tutorial_example(xyz) -> None:
    x, y, z = xyz
    f = opweave.function([x, y, z], mul(add(x, y), z))
    assert f(1.0, 2.0, 3.0) == 9.0


def test_list_of_outputs_returns_list(xyz) -> None:
    x, y, _ = xyz
    f = opweave.function([x, y], [add(x, y), sub(x, y)])
    assert f(5.0, 3.0) == [8.0, 2.0]
    assert opweave.function([x, y], [add(x, y)])(1.0, 1.0) == [2.0]


def test_constant_operand(xyz) -> None:
    """The graph-structures tutorial: ``c = a + b`` with a constant ``a`` compiles with ``b``
    alone."""
    _, b, _ = xyz
    a = Constant(double, 1.5)
    f = opweave.function([b], add(a, b))
    assert f(2.5) == 4.0


def test_missing_input_names_the_variable(xyz) -> None:
    x, y, _ = xyz
    with pytest.raises(MissingInputError, match="need y"):
        opweave.function([x], add(x, y))


def test_constant_as_input_is_type_error(xyz) -> None:
    _, b, _ = xyz
    a = Constant(double, 1.5)
    with pytest.raises(TypeError, match="is a Constant"):
        opweave.function([a, b], add(a, b))


def test_non_variable_input_and_output(xyz) -> None:
    x, _, _ = xyz
    with pytest.raises(TypeError, match="function input 0 must be a Variable"):
        opweave.function([1.0], x)
    with pytest.raises(TypeError, match="function output 0 must be a Variable"):
        opweave.function([x], "nope")


def test_an_intermediate_input_cuts_the_graph_there(xyz) -> None:
    x, y, z = xyz
    s = add(x, y)
    f = opweave.function([s, z], mul(s, z))
    assert f(3.0, 2.0) == 6.0  # s is given, x and y are not needed
    assert all(node.op != add for node in f.maker.fgraph.apply_nodes)
    g = opweave.function([opweave.In(s, name="s")], mul(s, 2.0), givens={z: s})
    assert g(4.0) == 8.0


def test_duplicate_and_unused_inputs(xyz) -> None:
    x, y, _ = xyz
    with pytest.raises(ValueError, match="given twice"):
        opweave.function([x, x], add(x, x))
    with pytest.raises(UnusedInputError, match=r"input 1 \(y\) is not used"):
        opweave.function([x, y], add(x, 1.0))
    f = opweave.function([x, y], add(x, 1.0), on_unused_input="ignore")
    assert f(1.0, 5.0) == 2.0


def test_bad_argument_names_position_name_and_type(xyz) -> None:
    x, y, z = xyz
    f = opweave.function([x, y, z], mul(add(x, y), z))
    with pytest.raises(TypeError) as info:
        f(1.0, 2**53 + 1, 3.0)
    msg = str(info.value)
    assert "argument 1" in msg and "'y'" in msg and "expected double" in msg
    assert "cannot accurately represent" in msg
    with pytest.raises(ValueError, match=r"argument 2 \(name 'z'\).*expected double"):
        f(1.0, 2.0, "three")
    with pytest.raises(TypeError, match=r"argument 0 .*expected double"):
        f(None, 2.0, 3.0)


def test_wrong_argument_count_and_keywords(xyz) -> None:
    x, y, _ = xyz
    f = opweave.function([x, y], add(x, y))
    with pytest.raises(TypeError, match="takes 2 inputs, got 3"):
        f(1.0, 2.0, 3.0)
    with pytest.raises(TypeError, match=r"missing input argument 1 \(name 'y'"):
        f(1.0)
    assert f(1.0, y=4.0) == 5.0
    with pytest.raises(TypeError, match="no input named 'w'"):
        f(1.0, w=2.0)


def test_every_input_by_keyword(xyz) -> None:
    """``f(**point)`` naming every input once (PyMC's call) binds by name, in any order,
    on the fast path and with the lock (updates); anything else takes the general way."""
    x, y, z = xyz
    f = opweave.function([x, y, z], sub(mul(x, y), z))
    assert f(z=1.0, x=2.0, y=5.0) == 9.0
    assert f(**{"y": 5.0, "z": 1.0, "x": 2.0}) == 9.0
    with pytest.raises(TypeError, match="no input named 'w'"):
        f(x=1.0, y=2.0, w=3.0)  # as many keywords, one unknown
    with pytest.raises(ValueError, match=r"argument 2 \(name 'z'\).*expected double"):
        f(x=1.0, y=2.0, z="no")
    import opweave.tensor as ot

    s, v = opweave.shared(0.0, name="s"), ot.dscalar("v")
    g = opweave.function([v], s, updates=[(s, s + v)])
    assert g(v=2.0) == 0.0 and g(v=3.0) == 2.0 and s.get_value() == 5.0
    twice = opweave.function([opweave.In(x, name="a"), opweave.In(y, name="a")], add(x, y))
    with pytest.raises(TypeError):
        twice(a=1.0)  # a name two inputs share binds one of them only


def test_allow_input_downcast_and_strict(xyz) -> None:
    x, _, _ = xyz
    f = opweave.function([x], mul(x, 2.0), allow_input_downcast=True)
    assert f(2**53 + 1) == 2.0 * float(2**53)
    g = opweave.function([In(x, strict=True)], mul(x, 2.0))
    with pytest.raises(TypeError, match="Expected a float!"):
        g(1)
    assert g(1.0) == 2.0


def test_in_default_value_and_name(xyz) -> None:
    x, y, _ = xyz
    f = opweave.function([x, In(y, value=10.0, name="offset")], add(x, y))
    assert f(1.0) == 11.0
    assert f(1.0, offset=2.0) == 3.0


def test_in_update_carries_state(xyz) -> None:
    x, acc, _ = xyz
    f = opweave.function([x, In(acc, value=0.0, update=add(acc, x))], acc)
    assert f(1.0) == 0.0
    assert f(2.0) == 1.0
    assert f(0.0) == 3.0


def test_shared_variable_updates_applied_once_per_call(xyz) -> None:
    x, _, _ = xyz
    s = SharedVariable(double, 1.0, name="s")
    f = opweave.function([x], mul(s, x), updates=[(s, add(s, 1.0))])
    assert f(10.0) == 10.0
    assert s.get_value() == 2.0
    assert f(10.0) == 20.0
    assert s.get_value() == 3.0
    s.set_value(5.0)
    assert f(1.0) == 5.0
    with pytest.raises(TypeError, match="not a shared variable"):
        opweave.function([x], x, updates=[(x, add(x, 1.0))])


def test_givens_replace_a_variable(xyz) -> None:
    x, y, z = xyz
    f = opweave.function([x, z], add(x, y), givens={y: mul(z, 2.0)})
    assert f(1.0, 3.0) == 7.0


def test_output_that_is_an_input_is_copied(xyz) -> None:
    x, y, _ = xyz
    f = opweave.function([x, y], [x, add(x, y), x])
    assert f(1.0, 2.0) == [1.0, 3.0, 1.0]
    ops = [str(n.op) for n in f.maker.fgraph.toposort()]
    assert ops.count("DeepCopyOp") == 2


def test_outputs_none_with_updates(xyz) -> None:
    s = SharedVariable(double, 2.0)
    f = opweave.function([], None, updates=[(s, mul(s, s))])
    assert f() == []
    f()
    assert s.get_value() == 16.0


def test_unknown_linker_lists_installed_and_names_distribution(xyz, plugin_manager) -> None:
    x, _, _ = xyz
    plugin_manager.unregister(name="c")  # as if opweave-c were not installed
    with pytest.raises(LinkerNotFoundError) as info:
        opweave.function([x], add(x, 1.0), mode=opweave.Mode(linker="c"))
    msg = str(info.value)
    assert "pip install opweave-c" in msg and "py" in msg and "vm" in msg
    with pytest.raises(LinkerNotFoundError, match="no known distribution"):
        opweave.function([x], add(x, 1.0), mode=opweave.Mode(linker="warp"))


def test_linker_from_config(xyz, plugin_manager) -> None:
    x, _, _ = xyz
    with opweave.config.change_flags(linker="py"):
        f = opweave.function([x], add(x, 1.0))
    assert type(f.maker.linker).__name__ == "PerformLinker"
    with opweave.config.change_flags(linker="auto"):
        g = opweave.function([x], add(x, 1.0))
    assert type(g.maker.linker).__name__ == "CVMLinker"  # opweave-c is installed
    assert g(1.0) == 2.0
    plugin_manager.unregister(name="c")
    with opweave.config.change_flags(linker="auto"):
        h = opweave.function([x], add(x, 1.0))
    assert type(h.maker.linker).__name__ == "VMLinker"


def test_modes_by_name(xyz) -> None:
    x, _, _ = xyz
    for mode in ("FAST_RUN", "FAST_COMPILE", opweave.Mode(linker="py", optimizer=None)):
        assert opweave.function([x], add(x, 1.0), mode=mode)(1.0) == 2.0
    with pytest.raises(ValueError, match="unknown mode 'FAST'"):
        opweave.function([x], add(x, 1.0), mode="FAST")


def test_no_backend_installed_is_a_clear_error(xyz, bare_plugin_manager) -> None:
    x, _, _ = xyz
    with pytest.raises(LinkerNotFoundError, match="pip install opweave-python"):
        opweave.function([x], add(x, 1.0))


def test_runtime_error_names_the_node(xyz) -> None:
    from opweave_double import div

    x, y, _ = xyz
    f = opweave.function([x, y], div(x, y))
    with pytest.raises(ZeroDivisionError) as info:
        f(1.0, 0.0)
    assert any("Apply node that caused the error: div(x, y)" in n for n in info.value.__notes__)


def test_variable_eval(xyz) -> None:
    x, y, _ = xyz
    expr = mul(add(x, y), 2.0)
    assert expr.eval({x: 1.0, y: 2.0}) == 6.0
    assert expr.eval({x: 3.0, y: 2.0}) == 10.0
    assert mul(Constant(double, 2.0), 4.0).eval() == 8.0


def test_trust_input_skips_filter(xyz) -> None:
    x, _, _ = xyz
    f = opweave.function([x], add(x, 1.0))
    f.trust_input = True
    assert f(1) == 2  # the int went through unchecked


def test_out_borrow_keeps_output_storage(xyz) -> None:
    x, _, _ = xyz
    f = opweave.function([x], Out(add(x, 1.0), borrow=True))
    assert f(1.0) == 2.0
    assert f.maker.linker.no_recycling == []


class DoubleInplace:
    """Builds an Op that doubles a vector in place (``destroy_map = {0: [0]}``)."""

    @staticmethod
    def make():
        import numpy as np

        from opweave.graph import Apply, Op
        from opweave_double import double_vector

        class TwiceInplace(Op):
            __props__ = ()
            destroy_map = {0: [0]}

            def make_node(self, v):
                return Apply(self, [v], [double_vector()])

            def perform(self, node, inputs, out):
                (v,) = inputs
                np.multiply(v, 2.0, out=v)
                out[0][0] = v

        return TwiceInplace(), double_vector


def test_inplace_graphs_need_accept_inplace_and_a_mutable_input() -> None:
    import numpy as np

    from opweave.graph import InconsistencyError

    op, vec = DoubleInplace.make()
    v = vec("v")
    with pytest.raises(TypeError, match=r"inplace operations \(TwiceInplace\).*accept_inplace"):
        opweave.function([v], op(v))
    with pytest.raises(InconsistencyError):
        opweave.function([v], op(v), accept_inplace=True)  # v belongs to the caller
    f = opweave.function([In(v, mutable=True)], op(v), accept_inplace=True)
    arr = np.ones(3)
    np.testing.assert_allclose(f(arr), 2.0)
    np.testing.assert_allclose(arr, 2.0)  # overwritten, as the caller allowed


def test_inputs_not_in_a_list_get_a_clear_error() -> None:
    import numpy as np

    import opweave.tensor as ot

    x = ot.dvector("x")
    with pytest.raises(TypeError, match=r"list \(or tuple\) of Variables or In.*use \[x\]"):
        opweave.function(x, x * 2)
    with pytest.raises(TypeError, match="list"):
        opweave.function({x}, x * 2)
    assert opweave.function((x,), x * 2)(np.ones(2)).tolist() == [2.0, 2.0]
