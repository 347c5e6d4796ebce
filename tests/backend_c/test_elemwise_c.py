"""Elemwise, Composite, DimShuffle and scalar Ops in C, compared with the Python backend.

Each test compiles few graphs (every distinct graph costs a gcc run): many expressions go
into one function with several outputs, or into one Composite.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import numpy as np
import pytest

import opweave
import opweave.scalar as ps
import opweave.tensor as ot
from opweave.compile import In, Mode
from opweave.compile.debugmode import DebugMode
from opweave.scalar.basic import UnaryScalarOp
from opweave.scalar.composite import Composite
from opweave.scalar.rules import same_out
from opweave.tensor.dimshuffle import DimShuffle
from opweave.tensor.elemwise import Elemwise
from opweave_c.impls.scalar_basic import has_scalar_c_code, scalar_c_code
from opweave_c.linkers.c_linker import MissingCCodeError


@pytest.fixture(autouse=True)
def scalar_math_library() -> Iterator[None]:
    """Compare exactly with NumPy: loops call the scalar C library, as NumPy's float64 loops
    do (``test_vector_math_c.py`` tests the vectorised math functions)."""
    with opweave.config.change_flags(c__vector_math=False):
        yield


DTYPES = [
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float32",
    "float64",
]

UNARY = [
    "neg",
    "abs_",
    "sign",
    "sqr",
    "reciprocal",
    "floor",
    "ceil",
    "trunc",
    "round_half_to_even",
    "round_half_away_from_zero",
    "exp",
    "exp2",
    "expm1",
    "log",
    "log2",
    "log10",
    "log1p",
    "sqrt",
    "sin",
    "cos",
    "tan",
    "arcsin",
    "arccos",
    "arctan",
    "sinh",
    "cosh",
    "tanh",
    "arcsinh",
    "arccosh",
    "arctanh",
    "sigmoid",
    "softplus",
    "erf",
    "erfc",
    "isnan",
    "isinf",
    "invert",
    "identity",
    "convert_to_bool",
    "convert_to_int8",
    "convert_to_int16",
    "convert_to_int64",
    "convert_to_uint8",
    "convert_to_uint64",
    "convert_to_float32",
    "convert_to_float64",
]
BINARY = [
    "add",
    "sub",
    "mul",
    "true_div",
    "int_div",
    "mod",
    "pow",
    "maximum",
    "minimum",
    "lt",
    "gt",
    "le",
    "ge",
    "eq",
    "neq",
    "and_",
    "or_",
    "xor",
    "arctan2",
    "second",
]
TERNARY = ["clip", "switch"]
#: Ops whose float results may differ in the last bits (NumPy's SIMD vs the C library).
APPROX = {
    "exp",
    "exp2",
    "expm1",
    "log",
    "log2",
    "log10",
    "log1p",
    "sin",
    "cos",
    "tan",
    "arcsin",
    "arccos",
    "arctan",
    "sinh",
    "cosh",
    "tanh",
    "arcsinh",
    "arccosh",
    "arctanh",
    "sigmoid",
    "softplus",
    "erf",
    "erfc",
    "arctan2",
    "pow",
}


def mode(linker: str, optimizer: str | None = None) -> Mode:
    return Mode(linker=linker, optimizer=optimizer)


def special_values(dtype: str) -> np.ndarray:
    """Values that exercise signs, rounding, wrap-around and IEEE special cases."""
    if dtype == "bool":
        return np.array([False, True])
    if dtype.startswith("float"):
        v = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, -7.25, 1e-3, 0.3, 0.999]
        return np.array([*v, 100.0, -100.0, np.inf, -np.inf, np.nan], dtype=dtype)
    info = np.iinfo(dtype)
    v = [0, 1, 2, 3, 7, -1, -2, -7, 100, info.max, info.min, info.max - 1, info.min + 1]
    return np.array([x for x in v if info.min <= x <= info.max], dtype=dtype)


def grid(dtype: str, other: str | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every pair of special values (and a third, shifted operand)."""
    a, b = special_values(dtype), special_values(other or dtype)
    x, y = (m.ravel() for m in np.meshgrid(a, b))
    return x, y, np.roll(y, 3)


def scalar_outputs(x, y, z, names=None):
    """Every scalar Op that accepts these inputs, applied to them: (names, outputs)."""
    names_out, outs = [], []
    for group, args in ((UNARY, (x,)), (BINARY, (x, y)), (TERNARY, (x, y, z))):
        for name in group:
            if names is not None and name not in names:
                continue
            try:
                outs.append(getattr(ps, name)(*args))
            except (TypeError, ValueError):
                continue
            names_out.append(name)
    return names_out, outs


def check_close(name: str, got, expected, declared: str) -> None:
    """``got`` has the declared dtype, ``expected``'s shape and (close to) its values."""
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == np.dtype(declared), (name, got.dtype, declared)
    assert got.shape == expected.shape, (name, got.shape, expected.shape)
    # The Python backend returns int8 for bool ``sqr``/``//``/``%`` (NumPy's ufunc result);
    # values are compared in the declared dtype.
    expected = expected.astype(declared)
    if got.dtype.kind == "f" and name in APPROX:
        rtol = 2e-6 if got.dtype == np.float32 else 1e-13
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=0, equal_nan=True, err_msg=name)
    else:
        np.testing.assert_array_equal(got, expected, err_msg=name)
        if got.dtype.kind == "f":  # the sign of zeros too
            np.testing.assert_array_equal(np.signbit(got), np.signbit(expected), err_msg=name)


def run_all(inputs, outputs, values, linkers=("c", "cvm"), optimizer=None, names=None):
    """Compile with each linker and ``py``; compare every output; return the functions."""
    ref = opweave.function(inputs, outputs, mode=mode("py", optimizer))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = ref(*values)
    fns = {}
    for linker in linkers:
        f = opweave.function(inputs, outputs, mode=mode(linker, optimizer))
        got = f(*values)
        if not isinstance(outputs, list):
            got, exp = [got], [expected]
        else:
            exp = expected
        for k, (out, g, e) in enumerate(
            zip(outputs if isinstance(outputs, list) else [outputs], got, exp)
        ):
            name = names[k] if names else f"output {k}"
            check_close(name, g, e, out.type.dtype)
        if linker == "cvm":
            order = f.maker.fgraph.toposort()
            assert f.fn.c_nodes == list(range(len(order))), "every node should run in C"
        fns[linker] = f
    return fns


# ====================================================================== scalar Ops


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_scalar_op_on_scalar_variables(dtype: str) -> None:
    """Scalar-level nodes (ScalarType variables) in C give the Python backend's values and
    dtypes for every scalar Op and special value."""
    st = ps.get_scalar_type(dtype)
    x, y, z = st("x"), st("y"), st("z")
    names, outs = scalar_outputs(x, y, z)
    if dtype.startswith("int"):  # int ** negative int: see test_integer_power_...
        keep = [k for k, n in enumerate(names) if n != "pow"]
        names, outs = [names[k] for k in keep], [outs[k] for k in keep]
    fc = opweave.function([x, y, z], outs, mode=mode("c"))
    fp = opweave.function([x, y, z], outs, mode=mode("py"))
    xs, ys, zs = grid(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for args in zip(xs, ys, zs, strict=True):
            got, expected = fc(*args), fp(*args)
            for name, out, g, e in zip(names, outs, got, expected, strict=True):
                if name.startswith("convert_to_u") and dtype.startswith("float"):
                    if not np.isfinite(args[0]) or args[0] < 0:
                        continue  # undefined in C (and platform-dependent in NumPy)
                assert type(g) is np.dtype(out.type.dtype).type, (name, type(g))
                check_close(name, g, e, out.type.dtype)


@pytest.mark.parametrize("dtype", ["float64", "int8"])
def test_every_scalar_op_in_one_composite_loop(dtype: str) -> None:
    """All scalar Ops as the outputs of one Composite: one Elemwise loop computing ~60
    results per element, equal to the Python backend's."""
    st = ps.get_scalar_type(dtype)
    sx, sy, sz = st(), st(), st()
    names, outs = scalar_outputs(sx, sy, sz)
    keep = [
        k
        for k, n in enumerate(names)
        if not (n == "pow" and dtype in ("int8",))
        and not (n.startswith("convert_to_u") and dtype.startswith("float"))
    ]
    names, outs = [names[k] for k in keep], [outs[k] for k in keep]
    x, y, z = (ot.vector(n, dtype=dtype) for n in "xyz")
    results = Elemwise(Composite([sx, sy, sz], outs))(x, y, z, return_list=True)
    fns = run_all([x, y, z], results, grid(dtype), linkers=("c",), names=names)
    (node,) = fns["c"].maker.fgraph.toposort()
    assert isinstance(node.op.scalar_op, Composite) and len(node.outputs) == len(outs)


def test_mixed_dtypes_promote_and_compare_as_numpy() -> None:
    """Mixed-dtype arithmetic computes in NumPy's result dtype (wrapping, int64 with uint64
    in float64, bool with ints); signed-unsigned comparisons are exact."""
    pairs = [("int8", "uint8"), ("int64", "uint64"), ("int32", "float32"), ("bool", "int16")]
    names = {"add", "sub", "mul", "true_div", "int_div", "mod", "maximum"}
    names |= {"lt", "ge", "eq", "and_", "switch", "clip"}
    inputs, outputs, values, labels = [], [], [], []
    for k, (da, db) in enumerate(pairs):
        x, y = ot.vector(f"x{k}", dtype=da), ot.vector(f"y{k}", dtype=db)
        sx, sy = ps.get_scalar_type(da)(), ps.get_scalar_type(db)()
        lab, outs = scalar_outputs(sx, sy, sy, names)
        comp = Composite([sx, sy], outs)
        outputs += Elemwise(comp)(x, y, return_list=True)
        labels += [f"{n}({da}, {db})" for n in lab]
        inputs += [x, y]
        xs, ys, _ = grid(da, db)
        values += [xs, ys]
    labels = [lab.split("(")[0] if lab.split("(")[0] in APPROX else lab for lab in labels]
    run_all(inputs, outputs, values, linkers=("c",), names=labels)


def test_integer_power_and_its_negative_exponents() -> None:
    """Integer powers wrap around; negative exponents go through float64 as in Python."""
    x, e = ot.lvector("x"), ot.lvector("e")
    b, be = ot.vector("b", dtype="uint8"), ot.vector("be", dtype="uint8")
    xs = np.array([0, 1, 2, 3, -3, 7, 2**62, -(2**63), 12345], dtype="int64")
    xv, ev = (m.ravel() for m in np.meshgrid(xs, np.array([0, 1, 2, 3, 5, 63, 64])))
    bs = np.arange(0, 256, 7, dtype="uint8")
    bv, bev = (m.ravel() for m in np.meshgrid(bs, np.array([0, 1, 2, 5, 8, 255], "uint8")))
    neg = ot.lvector("n")
    run_all(
        [x, e, b, be, neg],
        [x**e, b**be, neg ** np.int64(-1), neg ** np.int64(-2)],
        [xv, ev, bv, bev, np.array([1, -1, 2, -2, 5, -5], dtype="int64")],
        names=["int pow", "uint pow", "pow -1", "pow -2"],
    )


@pytest.mark.parametrize("optimizer", [None, "fast_run"])
def test_power_one_half_follows_numpys_sqrt_fast_path(optimizer) -> None:
    """``x ** 0.5`` with a scalar exponent is NumPy's ``sqrt`` (``nan`` at ``-inf``, ``-0.0``
    at ``-0.0``); with an array of exponents it is ``pow``."""
    x, e = ot.dvector("x"), ot.dvector("e")
    xs = np.array([-np.inf, -0.0, 4.0, np.inf, np.nan, -4.0, 0.0, 2.0])
    outs = [x**0.5, x**e, ot.exp(x) ** 0.5, ot.sqrt(x) + x**e]
    run_all([x, e], outs, [xs, np.full(8, 0.5)], optimizer=optimizer)


def test_scalar_c_code_is_plain_c_for_other_backends() -> None:
    """The reusable entry point: C statements on given names, ``None`` without C."""
    code = scalar_c_code(ps.add, ["float64", "float64"], ["float64"], ["a", "b"], ["r"])
    assert code == "r = (a + b);"
    code = scalar_c_code(ps.int_div, ["int8", "int8"], ["int8"], ["a", "b"], ["r"])
    assert code == "r = opw_sc_floordiv_int8(a, b);"
    sx, sy = ps.float32(), ps.float32()
    comp = Composite([sx, sy], [ps.exp(sx) * sy, sx - sy])
    code = scalar_c_code(comp, ["float32"] * 2, ["float32"] * 2, ["a", "b"], ["r0", "r1"])
    assert "expf(a)" in code and "r0 = " in code and "r1 = " in code and "Py" not in code
    assert not has_scalar_c_code(ps.add, ["float16", "float16"], ["float16"])
    assert not has_scalar_c_code(ps.add, ["complex128"] * 2, ["complex128"])


class Cube(UnaryScalarOp):
    """A user scalar Op with its own Python ``impl`` and C code (PyTensor style), support
    code and a failure path."""

    def impl(self, x):
        if np.any(np.asarray(x) < -100):
            raise ValueError("cube: too small")
        return x * x * x

    def c_support_code(self, **kwargs):
        return "static double opw_test_cube(double v) { return v * v * v; }"

    def c_code(self, node, name, inputs, outputs, sub):
        (x,), (z,) = inputs, outputs
        return (
            f'if ({x} < -100) {{ PyErr_SetString(PyExc_ValueError, "cube: too small"); '
            f"{sub['fail']} }}\n{z} = opw_test_cube({x});"
        )

    def c_code_cache_version(self):
        return (1,)


def test_scalar_ops_with_their_own_c_code() -> None:
    """A scalar Op's own ``c_code`` runs in Elemwise loops, inside Composites (a constant
    input becomes a variable) and on scalars; its failures raise its exception."""
    cube = Cube(same_out, name="cube")
    x, s = ot.dvector("x"), ps.float64("s")
    sx = ps.float64()
    comp = Composite([sx], [cube(sx) + 1, cube(ps.constant(2.0)) * sx])
    outs = [Elemwise(cube)(x), *Elemwise(comp)(x, return_list=True)]
    fns = run_all([x], outs, [np.arange(-3.0, 4.0)])
    for f in fns.values():
        with pytest.raises(ValueError, match="cube: too small"):
            f(np.array([1.0, -200.0]))
    f = opweave.function([s], [cube(s), comp(s)[0]], mode=mode("c"))
    assert f(2.0) == [8.0, 9.0]


# ====================================================================== loops


def test_broadcasting_follows_the_static_pattern() -> None:
    """Rows, columns, 0-d and size-1 axes broadcast where their Types say so."""
    m = ot.dmatrix("m")
    row = ot.TensorType("float64", shape=(1, None))("row")
    col = ot.TensorType("int32", shape=(None, 1))("col")
    s = ot.dscalar("s")
    t3 = ot.TensorType("float32", shape=(None, 1, None))("t3")
    outs = [m + row, m * col, row - col, m / s, t3 + row, ot.exp(col) * row + s, col // 3]
    values = [
        np.arange(12.0).reshape(3, 4),
        np.linspace(-1, 1, 4).reshape(1, 4),
        np.array([[1], [-2], [7]], dtype="int32"),
        np.array(2.5),
        np.arange(10, dtype="float32").reshape(5, 1, 2)[:, :, :1] * np.ones((1, 1, 4), "f4"),
    ]
    run_all([m, row, col, s, t3], outs, values)
    run_all([m, row, col, s, t3], outs, values, optimizer="fast_run")


def test_mismatched_lengths_raise_valueerror() -> None:
    """A length-1 axis whose Type is not broadcastable does not broadcast at run time."""
    x, y = ot.dvector("x"), ot.dvector("y")
    m = ot.dmatrix("m")
    outs = [x + y, m * x]
    fns = {lk: opweave.function([x, y, m], outs, mode=mode(lk)) for lk in ("c", "cvm", "py")}
    ok = [np.ones(3), np.ones(3), np.ones((2, 3))]
    for args in (
        [np.ones(3), np.ones(1), np.ones((2, 3))],
        [np.ones(3), np.ones(3), np.ones((2, 1))],
    ):
        for linker, f in fns.items():
            with pytest.raises(ValueError, match="do not match on axis"):
                f(*args)
            assert np.array_equal(f(*ok)[1], np.ones((2, 3))), linker


def test_non_contiguous_inputs() -> None:
    """Step slices, transposes, negative strides and Fortran order give the same values as
    contiguous inputs, through the strided loop."""
    a, b = ot.dmatrix("a"), ot.matrix("b", dtype="int16")
    t = ot.tensor3("t", dtype="float32")
    v = ot.dvector("v")
    outs = [a + b, ot.exp(a) * b - a, t * 2 + a.dimshuffle("x", 0, 1), a * v, b.T // 3]
    base = np.arange(60.0).reshape(6, 10)
    values = [
        base[::2, ::-3],
        np.asfortranarray(np.arange(12, dtype="int16").reshape(3, 4) - 5),
        np.arange(2 * 3 * 4 * 2, dtype="float32")
        .reshape(2, 4, 3, 2)[:, ::-1, :, 0]
        .transpose(0, 2, 1),
        np.arange(20.0)[::5],
    ]
    assert not values[0].flags.c_contiguous and not values[2].flags.c_contiguous
    run_all([a, b, t, v], outs, values)
    run_all([a, b, t, v], outs, values, optimizer="fast_run")


def test_empty_and_zero_dimensional_values() -> None:
    """Empty arrays give empty results of the right shape; 0-d values give 0-d arrays."""
    e, m, s = ot.dvector("e"), ot.matrix("m", dtype="int32"), ot.scalar("s", dtype="int8")
    outs = [e * 2, m + s, ot.exp(m) + 1, s * s, -s, ot.lt(s, 3)]
    run_all([e, m, s], outs, [np.zeros(0), np.zeros((0, 3), "int32"), np.array(-7, "int8")])
    fns = run_all(
        [e, m, s],
        outs,
        [np.zeros(0), np.zeros((2, 0), "int32"), np.array(5, "int8")],
        optimizer="fast_run",
    )
    assert fns["c"](np.ones(2), np.ones((1, 2), "int32"), np.array(1, "int8"))[3].shape == ()


def test_zero_dimensional_nodes_run_one_plain_call_in_place_and_out() -> None:
    """A 0-d node's C is one function called once (no flat, strided or vectorised loops
    to compile), for contiguous, unaligned and byte-swapped values, and in place, with the
    destroyed value also read as another input."""
    from opweave_c.linkers.cvm import node_block

    s, t = ot.dscalar("s"), ot.dscalar("t")
    comp = Composite([sa := ps.float64(), sb := ps.float64()], [sa * 2 + sb, sa - sb])
    outs = Elemwise(comp)(s, t, return_list=True)
    code = node_block(outs[0].owner, [], True)
    text = "\n".join([code.code, *code.support_apply])
    assert "opw_ew_inner_" in text
    assert not any(f"opw_ew_{kind}_" in text for kind in ("flat", "strided", "row", "par"))
    assert "OPW_EW_NOINLINE" not in text  # built at the module's level, not -O3
    f = opweave.function([s, t], outs, mode=mode("cvm"))
    np.testing.assert_array_equal(f(3.0, 4.0), [10.0, -1.0])
    raw = np.zeros(9, np.uint8)[1:].view(np.float64).reshape(())  # unaligned
    raw[()] = 1.5
    swapped = np.array(2.5, dtype=">f8")
    for a in (raw, swapped):
        np.testing.assert_array_equal(f(a, np.float64(1.0)), [float(a) * 2 + 1, float(a) - 1])
    inplace = Elemwise(comp, {0: 0})(s, t, return_list=True)
    for linker in ("c", "cvm"):
        g = opweave.function(
            [In(s, mutable=True), t], inplace, mode=mode(linker), accept_inplace=True
        )
        a = np.array(3.0)
        np.testing.assert_array_equal(g(a, np.array(4.0)), [10.0, -1.0])
        assert a == 10.0  # written in place
        a = np.array(3.0)
        np.testing.assert_array_equal(g(a, a), [9.0, 0.0])  # the same array twice


def test_outputs_reused_between_calls_stay_correct() -> None:
    """cvm keeps intermediate arrays between calls; a new shape or an overlap is handled."""
    x, y = ot.dvector("x"), ot.dvector("y")
    f = opweave.function([x, y], ot.sum(ot.exp(x) * y + x), mode=mode("cvm", "fast_run"))
    for n in (5, 5, 8, 0, 3):
        a, b = np.linspace(-1, 1, n), np.arange(n, dtype=float)
        np.testing.assert_allclose(f(a, b), np.sum(np.exp(a) * b + a), rtol=1e-12)


# ====================================================================== in place


def test_inplace_pattern_writes_into_the_destroyed_input() -> None:
    """``inplace_pattern`` output 0 in input 0: the input holds the result, contiguous or
    strided; a read-only input raises."""
    x, y = ot.dvector("x"), ot.dvector("y")
    out = Elemwise(ps.add, {0: 0})(x, y)
    for linker in ("c", "cvm"):
        f = opweave.function([In(x, mutable=True), y], out, mode=mode(linker), accept_inplace=True)
        if linker == "cvm":
            assert f.fn.c_nodes == list(range(len(f.maker.fgraph.toposort())))
        a = np.arange(8.0)
        np.testing.assert_array_equal(f(a, np.ones(8)), np.arange(1.0, 9.0))
        np.testing.assert_array_equal(a, np.arange(1.0, 9.0))
        a = np.arange(16.0)
        f(a[::2], np.full(8, 0.5))
        np.testing.assert_array_equal(a, np.arange(16.0) + np.tile([0.5, 0], 8))
        ro = np.arange(8.0)
        ro.flags.writeable = False
        with pytest.raises(ValueError, match="read-only"):
            f(ro, np.ones(8))


def test_inplace_multi_output_composite_and_overlapping_inputs() -> None:
    """A two-output Composite computed in place in its first input; an input overlapping
    the destroyed one (a reversed view of it) reads the old values, as out of place."""
    sa, sb = ps.float64(), ps.float64()
    comp = Composite([sa, sb], [sa * 2 + sb, sa - sb])
    x, y = ot.dvector("x"), ot.dvector("y")
    outs = Elemwise(comp, {0: 0})(x, y, return_list=True)
    f = opweave.function([In(x, mutable=True), y], outs, mode=mode("c"), accept_inplace=True)
    a, b = np.arange(6.0), np.arange(6.0) * 10
    r0, r1 = f(a, b)
    np.testing.assert_array_equal(r0, np.arange(6.0) * 12)
    np.testing.assert_array_equal(r1, -np.arange(6.0) * 9)
    np.testing.assert_array_equal(a, r0)
    a = np.arange(6.0)
    r0, r1 = f(a, a[::-1])  # y aliases x backwards: must see x's old values
    np.testing.assert_array_equal(r0, np.arange(6.0) * 2 + np.arange(6.0)[::-1])
    np.testing.assert_array_equal(r1, np.arange(6.0) - np.arange(6.0)[::-1])


def test_fast_run_inserts_inplace_elemwise_that_runs_in_c() -> None:
    """FAST_RUN makes an intermediate Elemwise work in place; it runs in C."""
    x, y, z = ot.dvector("x"), ot.dvector("y"), ot.dmatrix("z")
    outs = [ot.exp(x) * y + z, ot.sum(ot.exp(x))]
    fns = run_all(
        [x, y, z],
        outs,
        [np.linspace(-2, 2, 5), np.arange(5.0), np.ones((3, 5))],
        optimizer="fast_run",
    )
    order = fns["cvm"].maker.fgraph.toposort()
    assert any(isinstance(n.op, Elemwise) and n.op.inplace_pattern for n in order), order


# ====================================================================== fusion


def test_fused_composite_is_one_loop() -> None:
    """``exp(x) * y + z`` compiles in FAST_RUN to one Elemwise(Composite) node."""
    x, y, z = ot.dvector("x"), ot.dvector("y"), ot.dvector("z")
    n = 1001
    values = [np.linspace(-5, 5, n), np.linspace(0, 1, n), np.linspace(3, -3, n)]
    # ``exp`` may round differently in its last bit from NumPy's (SIMD) exp: compared to rtol.
    fns = run_all([x, y, z], ot.exp(x) * y + z, values, optimizer="fast_run", names=["exp"])
    for f in fns.values():
        (node,) = f.maker.fgraph.toposort()
        assert isinstance(node.op, Elemwise) and isinstance(node.op.scalar_op, Composite)
    np.testing.assert_allclose(fns["c"](*values), np.exp(values[0]) * values[1] + values[2])


# ====================================================================== DimShuffle


def test_dimshuffle_values() -> None:
    """Transposes, new axes and dropped broadcastable axes, on contiguous and strided
    inputs; the c linker returns copies of views of inputs (never aliases)."""
    m = ot.matrix("m", dtype="int32")
    t = ot.TensorType("float32", shape=(None, 1, None))("t")
    s = ot.dscalar("s")
    outs = [
        m.T,
        m.dimshuffle("x", 1, "x", 0),
        t.dimshuffle(2, 0),
        t.dimshuffle(0, "x", 2, 1),
        s.dimshuffle("x", "x"),
        m.dimshuffle(1, 0) + 1,
    ]
    values = [
        np.arange(20, dtype="int32").reshape(4, 5)[::2, ::-1],
        np.arange(6, dtype="float32").reshape(3, 1, 2),
        np.array(3.5),
    ]
    fns = run_all([m, t, s], outs, values)
    got = fns["c"](*values)
    assert not any(np.shares_memory(g, v) for g in got for v in values)


def test_dimshuffle_node_is_a_view_in_c() -> None:
    """The C thunk's output is a view: same memory, strides rearranged, writeable like the
    input; the Op's view_map holds."""
    x = ot.TensorType("float64", shape=(None, 1, None))("x")
    node = DimShuffle(3, (2, "x", 0)).make_node(x)
    storage = {x: [None], node.outputs[0]: [None]}
    compute = {x: [1], node.outputs[0]: [0]}
    thunk = node.op.make_thunk(node, storage, compute, [], impl="c")
    a = np.arange(2 * 1 * 3, dtype="float64").reshape(2, 1, 3)[:, :, ::-1]
    storage[x][0] = a
    thunk()
    out = storage[node.outputs[0]][0]
    expected = np.expand_dims(a.transpose(2, 0, 1).reshape(3, 2), 1)
    np.testing.assert_array_equal(out, expected)
    assert np.shares_memory(out, a) and out.flags.writeable
    out[0, 0, 0] = -1.0
    assert a[0, 0, 0] == -1.0
    assert compute[node.outputs[0]] == [1]


def test_debugmode_agrees_with_python_on_views_and_inplace() -> None:
    """DebugMode runs each node's C thunk against its Python one, checking view and destroy
    maps too."""
    x, y = ot.dmatrix("x"), ot.dvector("y")
    out = ot.exp(x.T) * y + ot.sum(x)
    f = opweave.function([x, y], out, mode=DebugMode())
    a = np.arange(6.0).reshape(3, 2) / 4
    np.testing.assert_allclose(f(a, np.arange(3.0)), np.exp(a.T) * np.arange(3.0) + a.sum())


# ====================================================================== no C


def test_dtypes_without_c_fall_back_to_python() -> None:
    """float16 has no C: cvm runs that node in Python, the c linker refuses."""
    x = ot.vector("x", dtype="float16")
    y = ot.dvector("y")
    outs = [x * 2, y + 1]
    f = opweave.function([x, y], outs, mode=mode("cvm"))
    order = f.maker.fgraph.toposort()
    half = [k for k, n in enumerate(order) if n.outputs[0].type.dtype == "float16"]
    assert half and not set(half) & set(f.fn.c_nodes)
    got = f(np.arange(3, dtype="float16"), np.arange(3.0))
    np.testing.assert_array_equal(got[0], np.arange(3, dtype="float16") * 2)
    with pytest.raises(MissingCCodeError):
        opweave.function([x, y], outs, mode=mode("c"))
