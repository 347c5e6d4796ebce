"""C code of Nonzero, ExtractDiag and DiagGrad: the values, dtypes and errors of the Python
backend on the ``c`` and ``cvm`` linkers; DebugMode over every Op given C code with them
(the softmax family and AdvancedIncSubtensor1 included)."""

from __future__ import annotations

import gc
import sys

import numpy as np
import pytest
from c_parity import DTYPES, MODES, check, compiled, strided

import opweave
import opweave.tensor as ot
from opweave.compile.debugmode import DebugMode
from opweave.tensor.basic import DiagGrad, ExtractDiag, Nonzero, diagonal
from opweave.tensor.special import LogSoftmax, Softmax, SoftmaxGrad
from opweave.tensor.subtensor import AdvancedIncSubtensor1
from opweave.tensor.type import TensorType

LAYOUTS = [np.ascontiguousarray, np.asfortranarray, strided]


# ====================================================================== Nonzero


@pytest.fixture(scope="module")
def nonzero_fns():
    xs = [TensorType(d, shape=(None, None, None))(f"x_{d}") for d in DTYPES]
    v = ot.fvector("v")
    m = ot.dmatrix("m")
    outs = [Nonzero()(x) for x in xs] + [Nonzero()(v), Nonzero()(m)]
    return compiled([*xs, v, m], outs)


def _nonzero_args(shape=(3, 4, 5), layout=np.ascontiguousarray, density=0.3):
    rng = np.random.default_rng(8)
    base = rng.integers(1, 100, size=shape) * (rng.random(shape) < density)
    xs = [layout(base.astype(d)) for d in DTYPES]
    v = rng.normal(size=shape[-1]).astype("float32")
    v[::2] = 0
    m = np.array([[np.nan, -0.0, 0.0], [np.inf, 1e-300, -np.inf]])
    return (*xs, layout(v), layout(m))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_nonzero_values_match_python(nonzero_fns, layout) -> None:
    cases = [
        _nonzero_args(layout=layout),
        _nonzero_args((2, 1, 7), layout, density=1.0),
        _nonzero_args((3, 0, 2), layout),
        _nonzero_args((2, 2, 2), layout, density=0.0),
    ]
    check(nonzero_fns, cases)
    out = nonzero_fns["c"](*cases[0])
    assert out[-1].tolist() == [[0, 1, 1, 1], [0, 0, 1, 2]]  # NaN counts, -0.0 does not
    assert out[0].dtype == np.int64 and out[0].shape[0] == 3
    assert out[-2].tolist() == [[1, 3]]


# ====================================================================== diagonals


@pytest.fixture(scope="module")
def diag_fns():
    xs = [TensorType(d, shape=(None, None, None))(f"x_{d}") for d in DTYPES]
    m = ot.dmatrix("m")
    y = ot.dmatrix("y")
    yi = ot.lmatrix("yi")
    yu = ot.dmatrix("yu")
    yrow = TensorType("float32", shape=(1, None))("yrow")
    outs = [diagonal(x, 1, 0, 2) for x in xs]
    outs += [
        ExtractDiag(-2, 2, 1)(xs[-1]),
        ExtractDiag(0, 1, 0)(m),
        ExtractDiag(5, 0, 1)(m),  # past the last column: empty
        DiagGrad(1, 0, 2)(xs[-1], y),
        DiagGrad(-1, 2, 0)(xs[-1], yi),  # int64 values cast to float64
        DiagGrad(0, 1, 2)(xs[2], yu),  # float64 values cast to uint16
        DiagGrad(-1, 0, 1)(m, yrow[0]),
    ]
    return compiled([*xs, m, y, yi, yu, yrow], outs)


def _diag_args(
    shape=(3, 4, 5), layout=np.ascontiguousarray, y=(4, 3), yi=(4, 3), yu=(3, 4), yrow=2
):
    rng = np.random.default_rng(9)
    base = rng.integers(0, 50, size=shape)
    xs = [layout(base.astype(d)) for d in DTYPES]
    return (
        *xs,
        layout(rng.normal(size=(3, 4))),
        layout(rng.normal(size=y) * 10),
        layout(rng.integers(-9, 9, size=yi)),
        layout(rng.normal(size=yu) * 1000),
        layout(rng.normal(size=(1, yrow)).astype("float32")),
    )


@pytest.mark.parametrize("layout", LAYOUTS)
def test_diagonals_match_python(diag_fns, layout) -> None:
    cases = [
        _diag_args(layout=layout),
        _diag_args(layout=layout, y=(4, 1), yi=(1, 3), yu=(1, 1), yrow=1),  # length-1 axes
        _diag_args((0, 4, 5), layout, y=(4, 0), yi=(4, 0), yu=(0, 4)),
        _diag_args((3, 1, 1), layout, y=(1, 0), yi=(1, 0), yu=(3, 1)),
    ]
    check(diag_fns, cases)
    out = diag_fns["c"](*cases[0])
    x = cases[0][DTYPES.index("float64")]
    np.testing.assert_array_equal(out[7], np.stack([x[i, :, i + 1] for i in range(3)], -1))
    assert out[7].flags.c_contiguous and not np.shares_memory(out[7], x)
    y = cases[0][-4]
    np.testing.assert_array_equal(out[11][[0, 1, 2], :, [1, 2, 3]], y.T)


def test_diag_grad_shape_mismatch_raises_numpys_error(diag_fns) -> None:
    cases = [_diag_args(y=(4, 4)), _diag_args(yi=(3, 3)), _diag_args(yu=(3, 0))]
    cases += [_diag_args(yrow=3)]
    check(diag_fns, cases)
    with pytest.raises(ValueError) as info:
        diag_fns["c"](*cases[0])
    assert str(info.value) == (
        "shape mismatch: value array of shape (4,4) could not be broadcast to indexing "
        "result of shape (4,3)"
    )


def test_diag_grad_with_repeated_axes_stays_in_python() -> None:
    x, y = ot.dmatrix("x"), ot.dvector("y")
    f = opweave.function([x, y], DiagGrad(0, 1, 1)(x, y), mode=MODES["cvm"])
    assert f.fn.c_nodes == []
    with pytest.raises(ValueError, match="repeated axis"):
        f(np.zeros((2, 2)), np.ones(2))


def test_no_reference_leaks(nonzero_fns, diag_fns) -> None:
    good, strided_args = _nonzero_args(), _nonzero_args(layout=strided)
    dgood, dbad = _diag_args(layout=strided), _diag_args(y=(4, 4))
    for name in ("c", "cvm"):
        f, g = nonzero_fns[name], diag_fns[name]

        def calls(n, f=f, g=g):
            for _ in range(n):
                f(*good)
                f(*strided_args)
                g(*dgood)
                with pytest.raises(ValueError):
                    g(*dbad)
            gc.collect()

        calls(2)
        watched = [*good, *strided_args, *dgood]
        refs = [sys.getrefcount(a) for a in watched]
        calls(300)
        assert [sys.getrefcount(a) for a in watched] == refs


# ====================================================================== DebugMode


def test_debugmode_agrees_with_python_on_the_new_c_code() -> None:
    """DebugMode runs each node's C against Python, checking values, destroy and view maps."""
    x, y = ot.dmatrix("x"), ot.dmatrix("y")
    il = ot.lvector("il")
    sm = Softmax(-1)(x)
    out = [
        sm,
        LogSoftmax(0)(x),
        SoftmaxGrad(-1)(y, sm),
        AdvancedIncSubtensor1(inplace=True)(x * 2, y, il),
        AdvancedIncSubtensor1(set_instead_of_inc=True)(x, y, il),
        Nonzero()(x > 0),
        DiagGrad(1, 0, 1)(x, ExtractDiag(0, 1, 0)(y)[:2]),
    ]
    f = opweave.function([x, y, il], out, mode=DebugMode(optimizer=None), accept_inplace=True)
    rng = np.random.default_rng(10)
    a, b = rng.normal(size=(3, 3)), rng.normal(size=(3, 3))
    r = f(a, b, np.array([2, 0, 2]))
    np.testing.assert_allclose(r[0].sum(axis=1), 1.0)
    np.testing.assert_allclose(r[3], [2 * a[0] + b[1], 2 * a[1], 2 * a[2] + b[0] + b[2]])
    np.testing.assert_array_equal(r[4], [b[1], a[1], b[2]])
    assert r[5].dtype == np.int64 and r[5].tolist() == np.array(np.nonzero(a > 0)).tolist()
