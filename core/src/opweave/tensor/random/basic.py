"""The common distributions (``pytensor.tensor.random.basic``).

Each distribution is a :class:`~opweave.tensor.random.op.RandomVariable` subclass and a
ready instance (or a function, where the parameters need preparing) named as in NumPy's
``Generator``: ``normal(loc, scale, size=None, rng=None)`` returns symbolic draws. The
keyword arguments of every one are ``size``, ``name``, ``rng``, ``dtype`` and
``return_next_rng`` (see :meth:`RandomVariable.__call__`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from opweave.tensor.basic import _const_int, _static_vector, as_tensor_variable, get_vector_length
from opweave.tensor.random.op import RandomVariable, normalize_size_param
from opweave.tensor.reductions import prod
from opweave.tensor.shape import specify_shape
from opweave.tensor.sort import argsort
from opweave.tensor.variable import TensorVariable

__all__ = [
    "BernoulliRV",
    "BetaRV",
    "BinomialRV",
    "CategoricalRV",
    "DirichletRV",
    "ExponentialRV",
    "GammaRV",
    "IntegersRV",
    "MvNormalRV",
    "NormalRV",
    "PermutationRV",
    "PoissonRV",
    "UniformRV",
    "bernoulli",
    "beta",
    "binomial",
    "categorical",
    "choice",
    "dirichlet",
    "exponential",
    "gamma",
    "integers",
    "multivariate_normal",
    "normal",
    "permutation",
    "poisson",
    "uniform",
]


class NormalRV(RandomVariable):
    """Normal draws: ``normal(loc=0.0, scale=1.0)``; ``scale`` must be non-negative."""

    name = "normal"
    signature = "(),()->()"
    dtype = "floatX"

    def __call__(self, loc: Any = 0.0, scale: Any = 1.0, **kwargs: Any) -> Any:  # type: ignore[override]
        """Draws with mean ``loc`` and standard deviation ``scale``."""
        return super().__call__(loc, scale, **kwargs)


class UniformRV(RandomVariable):
    """Uniform draws on ``[low, high)``: ``uniform(low=0.0, high=1.0)``."""

    name = "uniform"
    signature = "(),()->()"
    dtype = "floatX"

    def __call__(self, low: Any = 0.0, high: Any = 1.0, **kwargs: Any) -> Any:  # type: ignore[override]
        """Draws uniform on ``[low, high)``."""
        return super().__call__(low, high, **kwargs)


class IntegersRV(RandomVariable):
    """Integer draws on ``[low, high)``: ``integers(low, high=None)`` (int64)."""

    name = "integers"
    signature = "(),()->()"
    dtype = "int64"

    def __call__(self, low: Any, high: Any = None, **kwargs: Any) -> Any:  # type: ignore[override]
        """Draws in ``[low, high)``, or in ``[0, low)`` when ``high`` is ``None``."""
        if high is None:
            low, high = 0, low
        return super().__call__(low, high, **kwargs)


class BernoulliRV(RandomVariable):
    """Bernoulli draws (0 or 1, int64): ``bernoulli(p)`` with ``0 <= p <= 1``."""

    name = "bernoulli"
    signature = "()->()"
    dtype = "int64"

    def __call__(self, p: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        """Draws that are 1 with probability ``p``."""
        return super().__call__(p, **kwargs)


class BinomialRV(RandomVariable):
    """Binomial draws (int64): ``binomial(n, p)``."""

    name = "binomial"
    signature = "(),()->()"
    dtype = "int64"

    def __call__(self, n: Any, p: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        """The number of successes in ``n`` trials of probability ``p``."""
        return super().__call__(n, p, **kwargs)


class PoissonRV(RandomVariable):
    """Poisson draws (int64): ``poisson(lam=1.0)``."""

    name = "poisson"
    signature = "()->()"
    dtype = "int64"

    def __call__(self, lam: Any = 1.0, **kwargs: Any) -> Any:  # type: ignore[override]
        """Draws with mean ``lam``."""
        return super().__call__(lam, **kwargs)


class GammaRV(RandomVariable):
    """Gamma draws with parameters ``(shape, scale)``; see :func:`gamma`."""

    name = "gamma"
    signature = "(),()->()"
    dtype = "floatX"


_gamma = GammaRV()


def gamma(shape: Any, rate: Any = None, scale: Any = None, **kwargs: Any) -> Any:
    """Gamma draws of ``shape`` and either ``rate`` or ``scale`` (default ``scale=1``).

    Raises
    ------
    ValueError
        If both ``rate`` and ``scale`` are given.
    """
    if rate is not None and scale is not None:
        raise ValueError("gamma: give either rate or scale, not both")
    if rate is not None:
        scale = 1.0 / as_tensor_variable(rate)
    return _gamma(shape, 1.0 if scale is None else scale, **kwargs)


class BetaRV(RandomVariable):
    """Beta draws: ``beta(alpha, beta)`` with positive parameters."""

    name = "beta"
    signature = "(),()->()"
    dtype = "floatX"

    def __call__(self, alpha: Any, beta: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        """Draws in ``[0, 1]``."""
        return super().__call__(alpha, beta, **kwargs)


class ExponentialRV(RandomVariable):
    """Exponential draws: ``exponential(scale=1.0)`` (the mean)."""

    name = "exponential"
    signature = "()->()"
    dtype = "floatX"

    def __call__(self, scale: Any = 1.0, **kwargs: Any) -> Any:  # type: ignore[override]
        """Draws with mean ``scale``."""
        return super().__call__(scale, **kwargs)


class CategoricalRV(RandomVariable):
    """Categorical draws (int64 indices into the last axis of ``p``): ``categorical(p)``.

    The probabilities along the last axis must be non-negative and sum to 1.
    """

    name = "categorical"
    signature = "(p)->()"
    dtype = "int64"

    def __call__(self, p: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        """Draws ``i`` with probability ``p[..., i]``."""
        return super().__call__(p, **kwargs)


class MvNormalRV(RandomVariable):
    """Multivariate normal draws: ``multivariate_normal(mean, cov)``."""

    name = "multivariate_normal"
    signature = "(n),(n,n)->(n)"
    dtype = "floatX"

    def __call__(self, mean: Any, cov: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        """Draws of mean ``mean`` (last axis) and covariance ``cov`` (last two axes)."""
        return super().__call__(mean, cov, **kwargs)


class DirichletRV(RandomVariable):
    """Dirichlet draws: ``dirichlet(alphas)`` with positive concentrations."""

    name = "dirichlet"
    signature = "(a)->(a)"
    dtype = "floatX"

    def __call__(self, alphas: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        """Draws on the simplex, one weight per entry of the last axis of ``alphas``."""
        return super().__call__(alphas, **kwargs)


class PermutationRV(RandomVariable):
    """Random permutations; see :func:`permutation` (its signature follows ``x``)."""

    name = "permutation"
    signature = "()->(x)"
    dtype = "int64"

    def _supp_shape_from_params(
        self, dist_params: Sequence[TensorVariable], param_shapes: Sequence[Any] | None = None
    ) -> list[Any]:
        """``(x,)`` for a 0-d ``x`` (a permutation of ``arange(x)``), else ``x``'s core shape."""
        (x,) = dist_params
        if self.ndims_params[0] == 0:
            return [x.ravel()[0]]
        return super()._supp_shape_from_params(dist_params, param_shapes)

    def _static_supp_shape(self, dist_params: Sequence[TensorVariable]) -> list[int | None]:
        if self.ndims_params[0] == 0:
            return [None]
        return super()._static_supp_shape(dist_params)


def permutation(x: Any, **kwargs: Any) -> Any:
    """A random permutation of ``arange(x)`` (integer ``x``) or of ``x`` along its first axis.

    Every dimension of a tensor ``x`` is core: ``size`` adds batch dimensions.
    """
    x = as_tensor_variable(x)
    if x.ndim == 0:
        if x.dtype not in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32"):
            raise TypeError(f"permutation: a 0-d x must be an integer, got {x} of type {x.type!r}")
        signature, dtype = "()->(x)", "int64"
    else:
        dims = ",".join(f"x{i}" for i in range(x.ndim))
        signature, dtype = f"({dims})->({dims})", x.dtype
    return PermutationRV(signature=signature, dtype=dtype)(x, **kwargs)


def choice(
    a: Any,
    size: Any = None,
    replace: bool = True,
    p: Any = None,
    rng: Any = None,
    return_next_rng: bool = False,
    name: str | None = None,
) -> Any:
    """Draws from the entries of ``a`` (along its first axis), or of ``arange(a)`` for an int.

    Parameters
    ----------
    a
        A tensor, or an integer ``n`` for ``arange(n)``.
    size
        The shape of the indices drawn (default: one draw).
    replace
        Draw with replacement (independent draws); else the draws are distinct entries.
    p
        The probabilities of the entries (default: equal).
    rng, return_next_rng, name
        As for every random variable.

    Raises
    ------
    ValueError
        When drawing without replacement more entries than ``a`` has (when building the
        graph if the sizes are constants, else at run time).
    """
    a = as_tensor_variable(a)
    n = a if a.ndim == 0 else a.shape[0]
    if p is not None:
        p = specify_shape(as_tensor_variable(p), (n,))
    if replace or size is None:
        if p is None:
            next_rng, idx = integers(0, n, size=size, rng=rng, return_next_rng=True)
        else:
            next_rng, idx = categorical(p, size=size, rng=rng, return_next_rng=True)
    else:
        size_var = normalize_size_param(size, "choice")
        entries, known_n = _static_vector(size_var) or [], _const_int(n)
        known = [e for e in entries if e is not None]
        if known_n is not None and len(known) == len(entries) and math.prod(known) > known_n:
            raise ValueError(
                f"choice: cannot draw {math.prod(known)} distinct entries from {known_n} "
                "without replacement"
            )
        count = prod(size_var)
        if p is None:
            next_rng, order = permutation(n, rng=rng, return_next_rng=True)
        else:
            # Exponential races: sorting E_i / p_i picks entry i first with probability p_i,
            # then the next among the rest in proportion to theirs, as numpy's choice does.
            next_rng, times = exponential(1.0, size=(n,), rng=rng, return_next_rng=True)
            order = argsort(times / p)
        idx = order[:count].reshape(size_var, ndim=get_vector_length(size_var))
    out = idx if a.ndim == 0 else a[idx]
    if name is not None:
        out.name = name
    return (next_rng, out) if return_next_rng else out


normal = NormalRV()
uniform = UniformRV()
integers = IntegersRV()
bernoulli = BernoulliRV()
binomial = BinomialRV()
poisson = PoissonRV()
beta = BetaRV()
exponential = ExponentialRV()
categorical = CategoricalRV()
multivariate_normal = MvNormalRV()
dirichlet = DirichletRV()
