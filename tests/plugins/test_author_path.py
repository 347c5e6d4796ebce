"""A plugin author's path: a new Type and Op work on every linker without traps.

The plugin here is a "probability" double in [0, 1] with C code of its own, whose
``c_extract`` only checks for a float: weaker than its ``filter``, as most are.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest

import opweave
from opweave import graph as gof
from opweave.compile import Mode
from opweave.compile.debugmode import DebugMode
from opweave.compile.ops import register_deep_copy_op_c_code
from opweave.graph.utils import MethodNotDefined
from opweave.plugins import get_plugin_manager, hookimpl
from opweave_c.contract import UnversionedCCodeWarning, filter_checked_in_c
from opweave_c.linkers.c_linker import MissingCCodeError

LINKERS = ["py", "vm", "c", "cvm"]


def all_modes() -> dict[str, Any]:
    """Every linker, and DebugMode."""
    modes: dict[str, Any] = {name: Mode(linker=name) for name in LINKERS}
    modes["DebugMode"] = DebugMode()
    return modes


class Prob(gof.Type):
    """Python floats in [0, 1]; C: a ``double`` whose extraction only checks for a float."""

    def filter(self, x: Any, strict: bool = False, allow_downcast: bool | None = None) -> float:
        """``TypeError`` for non-numbers (non-floats when strict), ``ValueError`` off [0, 1]."""
        if strict and not isinstance(x, float):
            raise TypeError(f"expected a float, got {type(x).__name__}")
        if isinstance(x, bool) or not isinstance(x, int | float):
            raise TypeError(f"expected a real number, got {type(x).__name__}")
        if not 0.0 <= x <= 1.0:
            raise ValueError(f"{x} is not a probability")
        return float(x)

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self))

    def __str__(self) -> str:
        return "prob"

    def c_declare(self, name: str, sub: dict[str, str]) -> str:
        """A C double."""
        return f"double {name};"

    def c_init(self, name: str, sub: dict[str, str]) -> str:
        """Zero."""
        return f"{name} = 0.0;"

    def c_extract(self, name: str, sub: dict[str, str]) -> str:
        """Floats only; the range is not checked."""
        return (
            f"if (!PyFloat_Check(py_{name})) {{ PyErr_SetString(PyExc_TypeError, "
            f'"expected a float"); {sub["fail"]} }}\n{name} = PyFloat_AsDouble(py_{name});'
        )

    def c_sync(self, name: str, sub: dict[str, str]) -> str:
        """Box as a Python float."""
        return f"Py_XDECREF(py_{name});\npy_{name} = PyFloat_FromDouble({name});"

    def c_cleanup(self, name: str, sub: dict[str, str]) -> str:
        """Nothing to release."""
        return ""

    def c_code_cache_version(self) -> tuple[int, ...]:
        """Version 1."""
        return (1,)


prob = Prob()


class PyOnlyComplement(gof.Op):
    """``1 - p`` with no C code at all."""

    __props__ = ()

    def make_node(self, p: Any) -> gof.Apply:
        """One prob in, one out."""
        return gof.Apply(self, [p], [prob()])

    def perform(self, node: gof.Apply, inputs: Any, output_storage: Any) -> None:
        """In Python."""
        output_storage[0][0] = 1.0 - inputs[0]


class Complement(PyOnlyComplement):
    """``1 - p``, in Python and in C."""

    def c_code(self, node: Any, name: str, inputs: Any, outputs: Any, sub: Any) -> str:
        """In C."""
        return f"{outputs[0]} = 1.0 - {inputs[0]};"

    def c_code_cache_version(self) -> tuple[int, ...]:
        """Version 1."""
        return (1,)


complement = Complement()


def register_copy() -> None:
    """The DeepCopyOp C code for ``Prob``."""
    register_deep_copy_op_c_code(Prob, "%(oname)s = %(iname)s;", (1,))


def outcome(f: Any, value: Any) -> tuple[str, Any]:
    """``("ok", result)`` or ``("error", exception type)``."""
    try:
        return "ok", f(value)
    except (TypeError, ValueError) as exc:
        assert "argument 0 (name 'p')" in str(exc)
        return "error", type(exc)


# ---------------------------------------------------------------- (a) nodes without C


def test_cvm_runs_deep_copy_without_registered_c_in_python() -> None:
    p = prob("p")
    f = opweave.function([p], [complement(p), p], mode=Mode(linker="cvm"))
    order = [str(n.op) for n in f.maker.fgraph.toposort()]
    assert sorted(order) == ["Complement", "DeepCopyOp"]
    assert f(0.25) == [0.75, 0.25]
    assert f.fn.c_nodes == [order.index("Complement")]  # the copy runs in Python


def test_cvm_runs_an_op_without_c_in_python() -> None:
    register_copy()
    p = prob("p")
    f = opweave.function([p], complement(PyOnlyComplement()(p)), mode=Mode(linker="cvm"))
    assert f(0.25) == 0.25
    assert f.fn.c_nodes == [1]


def test_c_linker_names_the_missing_registration() -> None:
    p = prob("p")
    with pytest.raises(MissingCCodeError) as info:
        opweave.function([p], [complement(p), p], mode=Mode(linker="c"))
    message = str(info.value)
    assert "no C code is registered for DeepCopyOp on Type prob (Prob)" in message
    assert "opweave.compile.ops.register_deep_copy_op_c_code(Prob, code, version)" in message
    assert "opweave_register_deep_copy_op_c_code() hook" in message
    assert "linker='cvm'" in message
    assert not isinstance(info.value, MethodNotDefined)


def test_registering_through_the_hook_fixes_the_c_linker() -> None:
    class CopyProb:
        @hookimpl
        def opweave_register_deep_copy_op_c_code(self) -> list[tuple[type, str, tuple[int]]]:
            return [(Prob, "%(oname)s = %(iname)s;", (1,))]

    get_plugin_manager().register(CopyProb())
    p = prob("p")
    f = opweave.function([p], [complement(p), p], mode=Mode(linker="c"))
    assert f(0.25) == [0.75, 0.25]


def test_c_linker_names_an_op_without_c_and_how_to_give_it() -> None:
    register_copy()
    p = prob("p")
    with pytest.raises(MissingCCodeError) as info:
        opweave.function([p], PyOnlyComplement()(p), mode=Mode(linker="c"))
    message = str(info.value)
    assert "PyOnlyComplement has no C implementation (node PyOnlyComplement(p))" in message
    assert "give the Op class PyOnlyComplement a c_code method" in message
    assert 'opweave_implementation(op, node, backend) hook implementation for backend="c"' in (
        message
    )
    assert "linker='cvm'" in message


def test_a_type_without_c_names_the_methods_to_write() -> None:
    class NoC(gof.Type):
        def filter(self, x: Any, strict: bool = False, allow_downcast: Any = None) -> Any:
            return x

        def __eq__(self, other: object) -> bool:
            return type(self) is type(other)

        def __hash__(self) -> int:
            return hash(type(self))

    x = NoC()("x")
    with pytest.raises(MissingCCodeError, match="define c_declare, c_init, c_extract"):
        opweave.function([x], x, mode=Mode(linker="c"))
    assert opweave.function([x], x, mode=Mode(linker="cvm"))("anything") == "anything"


def test_shape_and_view_nodes_without_c_run_in_python_on_cvm() -> None:
    from opweave.compile.ops import Shape_i, shape, view_op

    class Arr(gof.Type):
        def filter(self, x: Any, strict: bool = False, allow_downcast: Any = None) -> Any:
            return x

        def __eq__(self, other: object) -> bool:
            return type(self) is type(other)

        def __hash__(self) -> int:
            return hash(type(self))

    import numpy as np

    a = Arr()("a")
    f = opweave.function(
        [a], [shape(a), Shape_i(1)(a), view_op(a)], mode=Mode(linker="cvm", optimizer=None)
    )
    value = np.zeros((2, 3))
    s, s1, v = f(value)
    assert list(s) == [2, 3] and int(s1) == 3 and v is not None


# ---------------------------------------------------------------- (b) filters hold everywhere


@pytest.mark.parametrize(
    "value, expected",
    [
        (0.25, ("ok", [0.75, 0.25])),
        (1, ("ok", [0.0, 1.0])),  # converted by filter, on every linker
        (1.5, ("error", ValueError)),
        (-0.5, ("error", ValueError)),
        ("0.5", ("error", TypeError)),
        (None, ("error", TypeError)),
    ],
)
def test_filter_accepts_and_refuses_alike_on_every_linker(value: Any, expected: Any) -> None:
    register_copy()
    p = prob("p")
    for name, mode in all_modes().items():
        f = opweave.function([p], [complement(p), p], mode=mode)
        assert outcome(f, value) == expected, name
        assert f(0.5) == [0.5, 0.5], name  # still works after a refusal


def test_c_linker_filters_keyword_trusted_and_strict_calls() -> None:
    register_copy()
    p = prob("p")
    f = opweave.function([p], complement(p), mode=Mode(linker="c"))
    with pytest.raises(ValueError, match="not a probability"):
        f(p=1.5)  # the generic path
    f.trust_input = True
    with pytest.raises(ValueError, match="not a probability"):
        f(1.5)
    g = opweave.function([opweave.In(p, strict=True)], complement(p), mode=Mode(linker="c"))
    with pytest.raises(TypeError, match="expected a float, got int"):
        g(1)  # strict: the filter's own refusal, not only the C check
    with pytest.raises(ValueError, match="not a probability"):
        g(1.5)
    assert g(0.5) == 0.5


def test_which_types_are_filtered_before_c() -> None:
    import opweave.tensor as ot
    from opweave_double import double

    assert filter_checked_in_c(ot.dvector().type) and filter_checked_in_c(ot.dscalar().type)
    assert not filter_checked_in_c(prob) and not filter_checked_in_c(double)

    class TrustedProb(Prob):
        c_extract_checks_filter = True

    assert filter_checked_in_c(TrustedProb())


def test_a_type_declaring_its_c_check_complete_is_not_filtered() -> None:
    class TrustedProb(Prob):
        c_extract_checks_filter = True

    register_deep_copy_op_c_code(TrustedProb, "%(oname)s = %(iname)s;", (1,))
    p = TrustedProb()("p")
    f = opweave.function([p], p, mode=Mode(linker="c"))
    assert f(1.5) == 1.5  # what the declaration promises is the Type's business
    with pytest.raises(TypeError, match="expected a float"):
        f(1)


# ---------------------------------------------------------------- (d) unversioned C


def _unversioned_op() -> gof.Op:
    class Unversioned(gof.Op):
        __props__ = ()

        def make_node(self, p: Any) -> gof.Apply:
            return gof.Apply(self, [p], [prob()])

        def perform(self, node: gof.Apply, inputs: Any, output_storage: Any) -> None:
            output_storage[0][0] = inputs[0]

        def c_code(self, node: Any, name: str, inputs: Any, outputs: Any, sub: Any) -> str:
            return f"{outputs[0]} = {inputs[0]};"

    return Unversioned()


def test_missing_cache_version_warns_once_per_class() -> None:
    register_copy()
    op = _unversioned_op()
    p = prob("p")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f = opweave.function([p], complement(op(p)), mode=Mode(linker="c"))
        opweave.function([p], op(op(p)), mode=Mode(linker="cvm"))
    found = [w for w in caught if issubclass(w.category, UnversionedCCodeWarning)]
    assert len(found) == 1
    message = str(found[0].message)
    assert message.startswith("Unversioned has C code without a c_code_cache_version")
    assert "compiled again in every process" in message
    assert "define c_code_cache_version() on" in message
    assert f(0.25) == 0.75


def test_unversioned_registration_warns_with_the_call_to_fix_it() -> None:
    class Other(Prob):
        pass

    register_deep_copy_op_c_code(Other, "%(oname)s = %(iname)s;")
    p = Other()("p")
    with pytest.warns(UnversionedCCodeWarning, match=r"registered for DeepCopyOp on Other"):
        f = opweave.function([p], p, mode=Mode(linker="c"))
    assert f(0.5) == 0.5


def test_versioned_code_does_not_warn() -> None:
    register_copy()
    p = prob("p")
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnversionedCCodeWarning)
        f = opweave.function([p], [complement(p), p], mode=Mode(linker="c"))
    assert f(0.0) == [1.0, 0.0]
