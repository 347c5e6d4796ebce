"""What PyMC's discrete and mixture distributions need from the core, as PyTensor gives it.

PyMC's ``check_selfconsistency_discrete_logcdf`` (and its tests of invalid parameters)
compile under ``pytensor.config.change_flags(mode=Mode("py"))``: PyTensor takes a ``Mode``
object for the flag, and a function compiled without ``mode=`` inside the block uses it.
PyMC's initial point (the support point of a ``Mixture`` or a zero-inflated distribution
with a ``size``) replaces a graph output by an expression of a more specific static shape,
which PyTensor's ``FunctionGraph.replace`` accepts. PyMC's NegativeBinomial log-CDF is
``log(betainc(n, value + 1, p))``, with ``n`` up to ``1e10`` and more near its Poisson
limit, where ``log(B(a, b))`` taken as a difference of large ``gammaln`` values lost up to
three digits. Each test runs on every linker (``py``, ``vm``, ``c``, ``cvm``) and compares
the values with SciPy's or NumPy's.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp
import scipy.stats as st
from differential.runner import usable_linkers

import opweave
import opweave.tensor as pt
from opweave.compile.mode import Mode, get_default_mode
from opweave.graph.fg import FunctionGraph

VALUES = np.array([0.0, 1.0, 3.0, 7.0, 12.0])
MU = 3.5


def _poisson_logpmf() -> tuple[pt.TensorVariable, pt.TensorVariable, pt.TensorVariable]:
    k, mu = pt.dvector("k"), pt.dscalar("mu")
    return k, mu, k * pt.log(mu) - mu - pt.gammaln(k + 1)


@pytest.mark.parametrize("linker", usable_linkers())
def test_function_compiled_under_a_mode_flag_uses_that_mode(linker: str) -> None:
    mode = Mode(linker=linker)
    k, mu, out = _poisson_logpmf()
    with opweave.config.change_flags(mode=mode):
        assert get_default_mode() is mode
        fn = opweave.function([k, mu], out)
    assert fn.maker.mode is mode
    np.testing.assert_allclose(fn(VALUES, MU), st.poisson.logpmf(VALUES, MU), rtol=1e-13)
    assert opweave.config.mode == "FAST_RUN"


@pytest.mark.parametrize("linker", usable_linkers())
def test_eval_under_a_mode_flag_matches_scipy(linker: str) -> None:
    k, mu, out = _poisson_logpmf()
    cdf = pt.logsumexp(out)
    with opweave.config.change_flags(mode=Mode(linker=linker)):
        got = cdf.eval({k: np.arange(6.0), mu: MU})
    np.testing.assert_allclose(got, st.poisson.logcdf(5, MU), rtol=1e-13)


def test_mode_flag_still_refuses_other_objects() -> None:
    with pytest.raises(ValueError, match="config flag 'mode'"):
        with opweave.config.change_flags(mode=3):
            pass
    with pytest.raises(ValueError, match="config flag 'mode'"):
        with opweave.config.change_flags(mode="FAST RUN"):
            pass
    assert opweave.config.mode == "FAST_RUN"


@pytest.mark.parametrize("linker", usable_linkers())
def test_graph_output_takes_a_more_specific_static_shape(linker: str) -> None:
    # PyMC's initial point (Mixture and zero-inflated support points) replaces an output
    # of shape (None,) by an expression of static shape (5,), as PyTensor allows.
    x = pt.dvector("x")
    placeholder = pt.exp(x)
    fg = FunctionGraph([x], [placeholder], clone=False)
    point = pt.specify_shape(pt.round(pt.log1p(x)), (5,))
    fg.replace(placeholder, point, import_missing=True)
    assert fg.outputs[0] is point
    assert fg.outputs[0].type.shape == (5,)
    assert placeholder not in fg.variables
    values = np.array([0.5, 1.5, 2.9, 7.0, 20.0])
    fn = opweave.function([x], fg.outputs[0], mode=Mode(linker=linker))
    np.testing.assert_array_equal(fn(values), np.round(np.log1p(values)))
    with pytest.raises(TypeError):
        fg.replace(point, pt.fvector("f"))  # another dtype is still refused


# ``betainc(a, b, x)`` with a large ``a``: PyMC's NegativeBinomial log-CDF is
# ``log(betainc(n, value + 1, p))``, and a large ``n`` (``alpha``) is its Poisson limit.
# The ``jax`` linker runs ``jax.scipy.special.betainc`` (as PyTensor's JAX backend does),
# whose accuracy is JAX's: only opweave's own kernels are held to SciPy's values here.
OWN_LINKERS = tuple(name for name in usable_linkers() if name in ("py", "vm", "c", "cvm"))
BETAINC_CASES = np.array(
    [
        [1e12, 1.0, 1e12 / (5 + 1e12)],
        [1e12, 6.0, 1e12 / (5 + 1e12)],
        [1e8, 3.0, 1e8 / (5 + 1e8)],
        [1e6, 3.0, 1e6 / (5 + 1e6)],
        [2e5, 0.001, 0.99999],
        [0.5, 1e6, 1e-7],
        [3.0, 2e5, 1e-5],
        [300.0, 3.0, 0.99],
        [5.0, 3.0, 0.55],
    ]
)


@pytest.mark.parametrize("linker", OWN_LINKERS)
def test_betainc_with_a_large_shape_matches_scipy(linker: str) -> None:
    a, b, x = pt.dvector("a"), pt.dvector("b"), pt.dvector("x")
    fn = opweave.function([a, b, x], pt.betainc(a, b, x), mode=Mode(linker=linker))
    got = fn(*BETAINC_CASES.T)
    np.testing.assert_allclose(got, sp.betainc(*BETAINC_CASES.T), rtol=1e-9)


@pytest.mark.parametrize("linker", OWN_LINKERS)
def test_negative_binomial_logcdf_near_its_poisson_limit(linker: str) -> None:
    n, p, k = pt.dscalar("n"), pt.dscalar("p"), pt.dvector("k")
    out = pt.log(pt.betainc(n, pt.floor(k) + 1, p))
    fn = opweave.function([n, p, k], out, mode=Mode(linker=linker))
    alpha, mu = 1e12, 5.0
    prob = alpha / (mu + alpha)
    ks = np.array([0.0, 3.0, 6.0])
    np.testing.assert_allclose(fn(alpha, prob, ks), st.nbinom.logcdf(ks, alpha, prob), rtol=1e-11)
