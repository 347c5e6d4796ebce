"""``opweave.printing.Print`` (the identity that prints when it runs) on the py, vm and cvm
linkers, and PyTensor's printer classes (``PPrinter``, ``OperatorPrinter``, ...).

The printer texts expected below were produced by PyTensor 2.38.3 on the same graphs.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.gradient import grad
from opweave.graph.basic import Constant
from opweave.printing import (
    VALID_ASSOC,
    ConstantPrinter,
    DefaultPrinter,
    FunctionPrinter,
    IgnorePrinter,
    LeafPrinter,
    OperatorPrinter,
    PatternPrinter,
    PPrinter,
    Print,
    Printer,
    PrinterState,
    char_from_number,
    constant_printer,
    default_printer,
    get_node_by_id,
    leaf_printer,
    min_informative_str,
    pp,
    pprint,
)


def linkers() -> list[str]:
    """``py`` and ``vm``, and ``cvm`` when the C backend is installed."""
    try:
        importlib.import_module("opweave_c")
    except ImportError:
        return ["py", "vm"]
    return ["py", "vm", "cvm"]


X0 = np.array([1.0, 2.5])


@pytest.mark.parametrize("linker", linkers())
def test_print_prints_each_run_and_returns_its_input(linker, capsys) -> None:
    x = ot.dvector("x")
    y = Print("x is", attrs=("__str__", "shape"))(x) * 2
    f = opweave.function([x], y, mode=Mode(linker=linker))
    np.testing.assert_array_equal(f(X0), X0 * 2)
    np.testing.assert_array_equal(f(X0 + 1), (X0 + 1) * 2)
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"x is __str__ = {X0}",
        "x is shape = (2,)",
        f"x is __str__ = {X0 + 1}",
        "x is shape = (2,)",
    ]


def test_print_calls_global_fn_and_is_never_constant_folded() -> None:
    seen = []
    op = Print("m", global_fn=lambda op, value: seen.append((op.message, value.copy())))
    f = opweave.function([], op(ot.constant(np.arange(3.0))) + 1)
    assert seen == []  # not run at compile time
    np.testing.assert_array_equal(f(), np.arange(3.0) + 1)
    f()
    assert [m for m, _ in seen] == ["m", "m"]
    np.testing.assert_array_equal(seen[0][1], np.arange(3.0))


def test_print_gradient_shape_and_props(capsys) -> None:
    x = ot.dvector("x")
    y = Print("v")(x)
    g = grad((y**2).sum(), x)
    np.testing.assert_array_equal(opweave.function([x], g)(X0), 2 * X0)
    assert Print("a") == Print("a") and Print("a") != Print("b")
    assert Print("a").attrs == ("__str__",) and Print.view_map == {0: [0]}
    assert y.type == x.type
    shape = opweave.function([x], y.shape)(X0)
    np.testing.assert_array_equal(shape, [2])
    capsys.readouterr()


def test_print_bad_input() -> None:
    with pytest.raises(TypeError, match="Print expects a symbolic Variable"):
        Print("m")(np.ones(2))
    with pytest.raises(TypeError, match="attrs must be a sequence of names"):
        Print("m", attrs="shape")


def test_print_has_no_c_code_and_the_c_linker_says_so() -> None:
    c_linker = pytest.importorskip("opweave_c.linkers.c_linker")
    x = ot.dvector("x")
    with pytest.raises(c_linker.MissingCCodeError, match=r"has no C implementation.*linker='cvm'"):
        opweave.function([x], Print("m")(x) * 2, mode=Mode(linker="c"))


# ====================================================================== printers


@pytest.fixture
def printer() -> PPrinter:
    """A PPrinter set up as PyTensor's examples do, with three Ops assigned."""
    pr = PPrinter()
    pr.assign(lambda pstate, r: True, default_printer)
    pr.assign(lambda pstate, r: isinstance(r, Constant), constant_printer)
    pr.assign(ot.add, OperatorPrinter("+", -2, "either"))
    pr.assign(ot.mul, OperatorPrinter("*", -1, "either"))
    pr.assign(ot.exp, FunctionPrinter(["EXP"]))
    return pr


def _graph():
    x, y = ot.dvector("x"), ot.dvector("y")
    return x, y, ot.exp(x) * y + x


def test_assigned_printers_render_as_in_pytensor(printer) -> None:
    x, _, z = _graph()
    assert printer(z) == "((EXP(x) * y) + x)"
    assert printer(ot.neg(x)) == "Neg(x)"
    assert printer(ot.tanh(x)) == "Tanh(x)"
    assert printer.clone_assign(ot.exp, PatternPrinter("e^%(0)s"))(z) == "((e^x * y) + x)"
    assert printer.clone_assign(ot.exp, IgnorePrinter())(z) == "((x * y) + x)"
    assert printer.clone_assign(ot.neg, OperatorPrinter("-", 0, "either"))(ot.neg(x)) == "(-x)"
    assert printer(z) == "((EXP(x) * y) + x)"  # clones do not change the original


def test_process_graph_as_in_pytensor(printer) -> None:
    x, y, z = _graph()
    assert printer.process_graph([x, y], [z]) == "return ((EXP(x) * y) + x)"
    z.name = "zz"
    u = z * x
    u.name = "u"
    assert printer([x, y], [u, z], {}, True).splitlines() == [
        "inputs: x, y",
        "u = (((EXP(x) * y) + x) * x)",
        "zz = ((EXP(x) * y) + x)",
    ]


def test_printer_classes_and_state() -> None:
    x = ot.dvector("x")
    alpha = ot.dvector("alpha")
    state = PrinterState(pprinter=pprint, extra=1)
    assert state.extra == 1 and state.memo == {}
    assert leaf_printer.process(alpha, state) == "\\alpha"
    assert isinstance(leaf_printer, LeafPrinter) and isinstance(default_printer, DefaultPrinter)
    assert isinstance(constant_printer, ConstantPrinter)
    assert ConstantPrinter().process(ot.constant(3.5), state) == "3.5"
    assert VALID_ASSOC == {"left", "right", "either"}
    with pytest.raises(ValueError, match="assoc must be one of"):
        OperatorPrinter("+", 0, "middle")
    with pytest.raises(TypeError, match="not the result of an operation"):
        OperatorPrinter("+", 0).process(x, state)
    with pytest.raises(TypeError):
        Printer()  # abstract
    with pytest.raises(TypeError, match="pprint takes a variable"):
        pprint(x, x)


def test_pprint_is_a_pprinter_with_opweave_rendering() -> None:
    _, _, z = _graph()
    assert isinstance(pprint, PPrinter) and pp is pprint
    assert pprint(z) == "((exp(x) * y) + x)"
    custom = pprint.clone_assign(ot.exp, FunctionPrinter(["E"]))
    assert custom(z) == "((E(x) * y) + x)"
    assert pprint(z) == "((exp(x) * y) + x)"


def test_char_from_number_min_informative_str_and_get_node_by_id() -> None:
    # PyTensor 2.38.3's values
    numbers = [0, 1, 25, 26, 27, 675, 676]
    assert [char_from_number(n) for n in numbers] == ["A", "B", "Z", "BA", "BB", "ZZ", "BAA"]
    x, y = ot.dvector("x"), ot.dvector("y")
    w = (x + y) * (x + y)
    assert min_informative_str(w).splitlines() == [
        "A. Mul",
        " B. Add",
        "  C. x",
        "  D. y",
        " E. Add",
        "  <C>",
        "  <D>",
    ]
    node = get_node_by_id(w, "B")
    assert node is w.owner.inputs[0].owner
    assert get_node_by_id(w, "C") is x and get_node_by_id(w, "Z") is None
    with pytest.raises(ValueError, match="id_types='int' is not supported"):
        get_node_by_id(w, "1", id_types="int")
