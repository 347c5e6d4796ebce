"""The common distributions (``pytensor.tensor.random.basic``).

Each distribution is a :class:`~opweave.tensor.random.op.RandomVariable` subclass and a
ready instance (or a function, where the parameters need preparing) named as in
PyTensor: ``normal(loc, scale, size=None, rng=None)`` returns symbolic draws. The keyword
arguments of every one are ``size``, ``name``, ``rng``, ``dtype`` and
``return_next_rng`` (see :meth:`RandomVariable.__call__`). The draws of each equal, for
the same generator state, those of the NumPy ``Generator`` method or the SciPy
distribution's ``rvs`` of the same distribution.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from opweave.tensor.basic import _const_int, _static_vector, as_tensor_variable, get_vector_length
from opweave.tensor.math import sqrt
from opweave.tensor.random.op import RandomVariable, normalize_size_param
from opweave.tensor.shape import specify_shape
from opweave.tensor.variable import TensorVariable

__all__ = [
    "BernoulliRV",
    "BetaBinomialRV",
    "BetaRV",
    "BinomialRV",
    "CategoricalRV",
    "CauchyRV",
    "ChoiceWithoutReplacement",
    "DirichletRV",
    "ExponentialRV",
    "GammaRV",
    "GenGammaRV",
    "GeometricRV",
    "GumbelRV",
    "HalfCauchyRV",
    "HalfNormalRV",
    "HyperGeometricRV",
    "IntegersRV",
    "InvGammaRV",
    "LaplaceRV",
    "LogNormalRV",
    "LogisticRV",
    "MultinomialRV",
    "MvNormalRV",
    "NegBinomialRV",
    "NormalRV",
    "ParetoRV",
    "PermutationRV",
    "PoissonRV",
    "ScipyRandomVariable",
    "StudentTRV",
    "TriangularRV",
    "TruncExponentialRV",
    "UniformRV",
    "VonMisesRV",
    "WaldRV",
    "WeibullRV",
    "bernoulli",
    "beta",
    "betabinom",
    "binomial",
    "categorical",
    "cauchy",
    "chisquare",
    "choice",
    "dirichlet",
    "exponential",
    "gamma",
    "gengamma",
    "geometric",
    "gumbel",
    "halfcauchy",
    "halfnormal",
    "hypergeometric",
    "integers",
    "invgamma",
    "laplace",
    "logistic",
    "lognormal",
    "multinomial",
    "multivariate_normal",
    "nbinom",
    "negative_binomial",
    "normal",
    "pareto",
    "permutation",
    "poisson",
    "rayleigh",
    "standard_normal",
    "t",
    "triangular",
    "truncexpon",
    "uniform",
    "vonmises",
    "wald",
    "weibull",
]


def scipy_draws_shape(draws: Any, params: Sequence[Any], size: Any) -> np.ndarray:
    """``draws`` from a SciPy ``rvs`` as an array of the shape NumPy broadcasting gives.

    SciPy returns NumPy scalars for 0-d draws and may drop the broadcast dimensions of
    the parameters when ``size`` is ``None``; this restores both.
    """
    array = np.asarray(draws)
    if size is None:
        expected = np.broadcast_shapes(*(np.shape(p) for p in params))
        if array.shape != expected:
            return np.broadcast_to(array, expected).copy()
    return array


class ScipyRandomVariable(RandomVariable):
    """A random variable drawn by a SciPy distribution's ``rvs`` (PyTensor's contract).

    Subclasses define the classmethod ``rng_fn_scipy(rng, *dist_params, size)``;
    :meth:`rng_fn` calls it and gives its result the broadcast shape of the parameters
    that SciPy may have dropped.
    """

    @classmethod
    def rng_fn_scipy(cls, rng: np.random.Generator, *args: Any, **kwargs: Any) -> Any:
        """The SciPy draws; subclasses define it.

        Raises
        ------
        NotImplementedError
            Unless a subclass defines it.
        """
        raise NotImplementedError(f"{cls.__name__} must define the classmethod rng_fn_scipy")

    @classmethod
    def rng_fn(cls, *args: Any, **kwargs: Any) -> Any:
        """``rng_fn_scipy(rng, *dist_params, size)`` with the broadcast shape restored."""
        draws = cls.rng_fn_scipy(*args, **kwargs)
        return scipy_draws_shape(draws, args[1:-1], args[-1])


class UniformRV(RandomVariable):
    """Uniform draws on ``[low, high)``."""

    name = "uniform"
    signature = "(),()->()"
    dtype = "floatX"
    _print_name = ("Uniform", "\\operatorname{Uniform}")

    def __call__(self, low: Any = 0.0, high: Any = 1.0, size: Any = None, **kwargs: Any) -> Any:  # type: ignore[override]
        """Symbolic draws; ``size`` and ``kwargs`` as for every random variable."""
        return super().__call__(low, high, size=size, **kwargs)


class TriangularRV(RandomVariable):
    """Triangular draws on ``[left, right]`` with peak ``mode``."""

    name = "triangular"
    signature = "(),(),()->()"
    dtype = "floatX"
    _print_name = ("Triangular", "\\operatorname{Triangular}")

    def __call__(self, left: Any, mode: Any, right: Any, size: Any = None, **kwargs: Any) -> Any:  # type: ignore[override]
        """Symbolic draws; ``size`` and ``kwargs`` as for every random variable."""
        return super().__call__(left, mode, right, size=size, **kwargs)


class BetaRV(RandomVariable):
    """Beta draws in ``[0, 1]`` with positive ``alpha`` and ``beta``."""

    name = "beta"
    signature = "(),()->()"
    dtype = "floatX"
    _print_name = ("Beta", "\\operatorname{Beta}")

    def __call__(self, alpha: Any, beta: Any, size: Any = None, **kwargs: Any) -> Any:  # type: ignore[override]
        """Symbolic draws; ``size`` and ``kwargs`` as for every random variable."""
        return super().__call__(alpha, beta, size=size, **kwargs)


class NormalRV(RandomVariable):
    """Normal draws with mean ``loc`` and standard deviation ``scale``."""

    name = "normal"
    signature = "(),()->()"
    dtype = "floatX"
    _print_name = ("Normal", "\\operatorname{Normal}")

    def __call__(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> Any:  # type: ignore[override]
        """Symbolic draws; ``size`` and ``kwargs`` as for every random variable."""
        return super().__call__(loc, scale, size=size, **kwargs)


class HalfNormalRV(ScipyRandomVariable):
    """Half-normal draws: ``loc + |N(0, scale)|``."""

    name = "halfnormal"
    signature = "(),()->()"
    dtype = "floatX"
    _print_name = ("HalfNormal", "\\operatorname{HalfNormal}")

    def __call__(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> Any:  # type: ignore[override]
        """Symbolic draws; ``size`` and ``kwargs`` as for every random variable."""
        return super().__call__(loc, scale, size=size, **kwargs)


class LogNormalRV(RandomVariable):
    """Log-normal draws: ``exp(N(mean, sigma))``."""

    name = "lognormal"
    signature = "(),()->()"
    dtype = "floatX"
    _print_name = ("LogNormal", "\\operatorname{LogNormal}")

    def __call__(self, mean: Any = 0.0, sigma: Any = 1.0, size: Any = None, **kwargs: Any) -> Any:  # type: ignore[override]
        """Symbolic draws; ``size`` and ``kwargs`` as for every random variable."""
        return super().__call__(mean, sigma, size=size, **kwargs)


class GammaRV(RandomVariable):
    """Gamma draws of ``shape`` and ``scale`` (see :func:`gamma` for ``rate``)."""

    name = "gamma"
    signature = "(),()->()"
    dtype = "floatX"
    _print_name = ("Gamma", "\\operatorname{Gamma}")

    def __call__(self, shape: Any, scale: Any, size: Any = None, **kwargs: Any) -> Any:  # type: ignore[override]
        """Symbolic draws; ``size`` and ``kwargs`` as for every random variable."""
        return super().__call__(shape, scale, size=size, **kwargs)


class ParetoRV(ScipyRandomVariable):
    """Pareto draws of shape ``b`` on ``[scale, inf)``."""

    name = "pareto"
    signature = "(),()->()"
    dtype = "floatX"
    _print_name = ("Pareto", "\\operatorname{Pareto}")

    def __call__(self, b: Any, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> Any:  # type: ignore[override]
        """Symbolic draws; ``size`` and ``kwargs`` as for every random variable."""
        return super().__call__(b, scale, size=size, **kwargs)


class GumbelRV(ScipyRandomVariable):
    """Gumbel (maximum) draws of location ``loc`` and scale ``scale``."""

    name = "gumbel"
    signature = "(),()->()"
    dtype = "floatX"
    _print_name = ("Gumbel", "\\operatorname{Gumbel}")

    def __call__(self, loc: Any, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> Any:  # type: ignore[override]
        """Symbolic draws; ``size`` and ``kwargs`` as for every random variable."""
        return super().__call__(loc, scale, size=size, **kwargs)


class ExponentialRV(RandomVariable):
    """Exponential draws with mean ``scale``."""

    name = "exponential"
    signature = "()->()"
    dtype = "floatX"
    _print_name = ("Exponential", "\\operatorname{Exponential}")

    def __call__(self, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> Any:  # type: ignore[override]
        """Symbolic draws; ``size`` and ``kwargs`` as for every random variable."""
        return super().__call__(scale, size=size, **kwargs)


class WeibullRV(RandomVariable):
    """Weibull draws of ``shape`` (scale 1)."""

    name = "weibull"
    signature = "()->()"
    dtype = "floatX"
    _print_name = ("Weibull", "\\operatorname{Weibull}")

    def __call__(self, shape: Any, size: Any = None, **kwargs: Any) -> Any:  # type: ignore[override]
        """Symbolic draws; ``size`` and ``kwargs`` as for every random variable."""
        return super().__call__(shape, size=size, **kwargs)


class LogisticRV(RandomVariable):
    """Logistic draws of location ``loc`` and scale ``scale``."""

    name = "logistic"
    signature = "(),()->()"
    dtype = "floatX"
    _print_name = ("Logistic", "\\operatorname{Logistic}")

    def __call__(self, loc: Any = 0, scale: Any = 1, size: Any = None, **kwargs: Any) -> Any:  # type: ignore[override]
        """Symbolic draws; ``size`` and ``kwargs`` as for every random variable."""
        return super().__call__(loc, scale, size=size, **kwargs)


class VonMisesRV(RandomVariable):
    """Von Mises draws on ``[-pi, pi]`` with mode ``mu`` and concentration ``kappa``."""

    name = "vonmises"
    signature = "(),()->()"
    dtype = "floatX"
    _print_name = ("VonMises", "\\operatorname{VonMises}")

    def __call__(self, mu: Any, kappa: Any, size: Any = None, **kwargs: Any) -> Any:  # type: ignore[override]
        """Symbolic draws; ``size`` and ``kwargs`` as for every random variable."""
        return super().__call__(mu, kappa, size=size, **kwargs)


class PoissonRV(RandomVariable):
    """Poisson draws (int64) with mean ``lam``."""

    name = "poisson"
    signature = "()->()"
    dtype = "int64"
    _print_name = ("Poisson", "\\operatorname{Poisson}")

    def __call__(self, lam: Any = 1.0, size: Any = None, **kwargs: Any) -> Any:  # type: ignore[override]
        """Symbolic draws; ``size`` and ``kwargs`` as for every random variable."""
        return super().__call__(lam, size=size, **kwargs)


class GeometricRV(RandomVariable):
    """Geometric draws (int64, from 1): the trial of the first success of probability ``p``."""

    name = "geometric"
    signature = "()->()"
    dtype = "int64"
    _print_name = ("Geometric", "\\operatorname{Geometric}")

    def __call__(self, p: Any, size: Any = None, **kwargs: Any) -> Any:  # type: ignore[override]
        """Symbolic draws; ``size`` and ``kwargs`` as for every random variable."""
        return super().__call__(p, size=size, **kwargs)


class HyperGeometricRV(RandomVariable):
    """Hypergeometric draws (int64): good items among ``nsample`` taken without replacement."""

    name = "hypergeometric"
    signature = "(),(),()->()"
    dtype = "int64"
    _print_name = ("HyperGeometric", "\\operatorname{HyperGeometric}")

    def __call__(self, ngood: Any, nbad: Any, nsample: Any, size: Any = None, **kwargs: Any) -> Any:  # type: ignore[override]
        """Symbolic draws; ``size`` and ``kwargs`` as for every random variable."""
        return super().__call__(ngood, nbad, nsample, size=size, **kwargs)


class CauchyRV(ScipyRandomVariable):
    """Cauchy draws of location ``loc`` and scale ``scale``."""

    name = "cauchy"
    signature = "(),()->()"
    dtype = "floatX"
    _print_name = ("Cauchy", "\\operatorname{Cauchy}")

    def __call__(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> Any:  # type: ignore[override]
        """Symbolic draws; ``size`` and ``kwargs`` as for every random variable."""
        return super().__call__(loc, scale, size=size, **kwargs)


class HalfCauchyRV(ScipyRandomVariable):
    """Half-Cauchy draws: ``loc + |Cauchy(0, scale)|``."""

    name = "halfcauchy"
    signature = "(),()->()"
    dtype = "floatX"
    _print_name = ("HalfCauchy", "\\operatorname{HalfCauchy}")

    def __call__(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> Any:  # type: ignore[override]
        """Symbolic draws; ``size`` and ``kwargs`` as for every random variable."""
        return super().__call__(loc, scale, size=size, **kwargs)


class InvGammaRV(RandomVariable):
    """Inverse-gamma draws: ``1 / Gamma(shape, 1 / scale)``."""

    name = "invgamma"
    signature = "(),()->()"
    dtype = "floatX"
    _print_name = ("InverseGamma", "\\operatorname{InverseGamma}")

    def __call__(self, shape: Any, scale: Any, size: Any = None, **kwargs: Any) -> Any:  # type: ignore[override]
        """Symbolic draws; ``size`` and ``kwargs`` as for every random variable."""
        return super().__call__(shape, scale, size=size, **kwargs)


class WaldRV(RandomVariable):
    """Wald (inverse Gaussian) draws of mean ``mean`` and shape ``scale``."""

    name = "wald"
    signature = "(),()->()"
    dtype = "floatX"
    _print_name = ("Wald", "\\operatorname{Wald}")

    def __call__(self, mean: Any = 1.0, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> Any:  # type: ignore[override]
        """Symbolic draws; ``size`` and ``kwargs`` as for every random variable."""
        return super().__call__(mean, scale, size=size, **kwargs)


class TruncExponentialRV(ScipyRandomVariable):
    """Exponential draws truncated to ``[loc, loc + b * scale]``."""

    name = "truncexpon"
    signature = "(),(),()->()"
    dtype = "floatX"
    _print_name = ("TruncatedExponential", "\\operatorname{TruncatedExponential}")

    def __call__(  # type: ignore[override]  # named parameters
        self, b: Any, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, **kwargs: Any
    ) -> Any:
        """Symbolic draws; ``size`` and ``kwargs`` as for every random variable."""
        return super().__call__(b, loc, scale, size=size, **kwargs)


class StudentTRV(ScipyRandomVariable):
    """Student's t draws with ``df`` degrees of freedom, location ``loc`` and scale ``scale``."""

    name = "t"
    signature = "(),(),()->()"
    dtype = "floatX"
    _print_name = ("StudentT", "\\operatorname{StudentT}")

    def __call__(  # type: ignore[override]  # named parameters
        self, df: Any, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, **kwargs: Any
    ) -> Any:
        """Symbolic draws; ``size`` and ``kwargs`` as for every random variable."""
        return super().__call__(df, loc, scale, size=size, **kwargs)


class BernoulliRV(ScipyRandomVariable):
    """Bernoulli draws (0 or 1, int64) that are 1 with probability ``p``."""

    name = "bernoulli"
    signature = "()->()"
    dtype = "int64"
    _print_name = ("Bernoulli", "\\operatorname{Bernoulli}")

    def __call__(self, p: Any, size: Any = None, **kwargs: Any) -> Any:  # type: ignore[override]
        """Symbolic draws; ``size`` and ``kwargs`` as for every random variable."""
        return super().__call__(p, size=size, **kwargs)


class LaplaceRV(RandomVariable):
    """Laplace draws of location ``loc`` and scale ``scale``."""

    name = "laplace"
    signature = "(),()->()"
    dtype = "floatX"
    _print_name = ("Laplace", "\\operatorname{Laplace}")

    def __call__(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, **kwargs: Any) -> Any:  # type: ignore[override]
        """Symbolic draws; ``size`` and ``kwargs`` as for every random variable."""
        return super().__call__(loc, scale, size=size, **kwargs)


class BinomialRV(RandomVariable):
    """Binomial draws (int64): successes in ``n`` trials of probability ``p``."""

    name = "binomial"
    signature = "(),()->()"
    dtype = "int64"
    _print_name = ("Binomial", "\\operatorname{Binomial}")

    def __call__(self, n: Any, p: Any, size: Any = None, **kwargs: Any) -> Any:  # type: ignore[override]
        """Symbolic draws; ``size`` and ``kwargs`` as for every random variable."""
        return super().__call__(n, p, size=size, **kwargs)


class NegBinomialRV(ScipyRandomVariable):
    """Negative binomial draws (int64): failures before ``n`` successes of probability ``p``."""

    name = "negative_binomial"
    signature = "(),()->()"
    dtype = "int64"
    _print_name = ("NegativeBinomial", "\\operatorname{NegativeBinomial}")

    def __call__(self, n: Any, p: Any, size: Any = None, **kwargs: Any) -> Any:  # type: ignore[override]
        """Symbolic draws; ``size`` and ``kwargs`` as for every random variable."""
        return super().__call__(n, p, size=size, **kwargs)


class BetaBinomialRV(ScipyRandomVariable):
    """Beta-binomial draws (int64): binomial of ``n`` trials with a ``Beta(a, b)`` probability."""

    name = "beta_binomial"
    signature = "(),(),()->()"
    dtype = "int64"
    _print_name = ("BetaBinomial", "\\operatorname{BetaBinomial}")

    def __call__(self, n: Any, a: Any, b: Any, size: Any = None, **kwargs: Any) -> Any:  # type: ignore[override]
        """Symbolic draws; ``size`` and ``kwargs`` as for every random variable."""
        return super().__call__(n, a, b, size=size, **kwargs)


class GenGammaRV(ScipyRandomVariable):
    """Generalized gamma draws of shapes ``alpha``, ``p`` and scale ``lambd``."""

    name = "gengamma"
    signature = "(),(),()->()"
    dtype = "floatX"
    _print_name = ("GeneralizedGamma", "\\operatorname{GeneralizedGamma}")

    def __call__(  # type: ignore[override]  # named parameters
        self, alpha: Any = 1.0, p: Any = 1.0, lambd: Any = 1.0, size: Any = None, **kwargs: Any
    ) -> Any:
        """Symbolic draws; ``size`` and ``kwargs`` as for every random variable."""
        return super().__call__(alpha, p, lambd, size=size, **kwargs)


class MultinomialRV(RandomVariable):
    """Multinomial draws (int64): counts of ``n`` trials over the categories of ``p``."""

    name = "multinomial"
    signature = "(),(p)->(p)"
    dtype = "int64"
    _print_name = ("Multinomial", "\\operatorname{Multinomial}")

    def __call__(self, n: Any, p: Any, size: Any = None, **kwargs: Any) -> Any:  # type: ignore[override]
        """Symbolic draws; ``size`` and ``kwargs`` as for every random variable."""
        return super().__call__(n, p, size=size, **kwargs)


class CategoricalRV(RandomVariable):
    """Categorical draws (int64 indices into the last axis of ``p``, which sums to 1)."""

    name = "categorical"
    signature = "(p)->()"
    dtype = "int64"
    _print_name = ("Categorical", "\\operatorname{Categorical}")

    def __call__(self, p: Any, size: Any = None, **kwargs: Any) -> Any:  # type: ignore[override]
        """Symbolic draws; ``size`` and ``kwargs`` as for every random variable."""
        return super().__call__(p, size=size, **kwargs)


class DirichletRV(RandomVariable):
    """Dirichlet draws on the simplex of the last axis of ``alphas``."""

    name = "dirichlet"
    signature = "(a)->(a)"
    dtype = "floatX"
    _print_name = ("Dirichlet", "\\operatorname{Dirichlet}")

    def __call__(self, alphas: Any, size: Any = None, **kwargs: Any) -> Any:  # type: ignore[override]
        """Symbolic draws; ``size`` and ``kwargs`` as for every random variable."""
        return super().__call__(alphas, size=size, **kwargs)


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


def chisquare(df: Any, size: Any = None, **kwargs: Any) -> Any:
    """Chi-square draws with ``df`` degrees of freedom: ``gamma(df / 2, scale=2)``."""
    return gamma(shape=as_tensor_variable(df) / 2.0, scale=2.0, size=size, **kwargs)


def rayleigh(scale: Any = 1.0, *, size: Any = None, **kwargs: Any) -> Any:
    """Rayleigh draws of ``scale``: ``sqrt(chisquare(2)) * scale``."""
    scale = as_tensor_variable(scale)
    if size is None:
        size = scale.shape
    return sqrt(chisquare(df=2, size=size, **kwargs)) * scale


def standard_normal(*, size: Any = None, rng: Any = None, dtype: str | None = None) -> Any:
    """Standard normal draws: ``normal(0, 1)``."""
    return normal(0.0, 1.0, size=size, rng=rng, dtype=dtype)


class IntegersRV(RandomVariable):
    """Integer draws on ``[low, high)``: ``integers(low, high=None)`` (int64)."""

    name = "integers"
    signature = "(),()->()"
    dtype = "int64"
    _print_name = ("integers", "\\operatorname{integers}")

    def __call__(self, low: Any, high: Any = None, size: Any = None, **kwargs: Any) -> Any:  # type: ignore[override]
        """Draws in ``[low, high)``, or in ``[0, low)`` when ``high`` is ``None``."""
        if high is None:
            low, high = 0, low
        return super().__call__(low, high, size=size, **kwargs)


_MVN_METHODS = ("cholesky", "svd", "eigh")


class MvNormalRV(RandomVariable):
    """Multivariate normal draws: ``multivariate_normal(mean, cov)``.

    Each draw is ``mean + A @ z`` for standard normal ``z``, where ``A`` factors ``cov``
    by ``method``: ``"cholesky"`` (the default), ``"svd"`` or ``"eigh"``.
    """

    name = "multivariate_normal"
    signature = "(n),(n,n)->(n)"
    dtype = "floatX"
    _print_name = ("MultivariateNormal", "\\operatorname{MultivariateNormal}")
    __props__ = ("name", "signature", "dtype", "inplace", "method")

    def __init__(self, *args: Any, method: str = "cholesky", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if method not in _MVN_METHODS:
            raise ValueError(
                f"multivariate_normal: unknown method {method!r}; use one of {_MVN_METHODS}"
            )
        self.method = method

    def __call__(  # type: ignore[override]
        self, mean: Any, cov: Any, size: Any = None, method: str | None = None, **kwargs: Any
    ) -> Any:
        """Draws of mean ``mean`` (last axis) and covariance ``cov`` (last two axes)."""
        if method is not None and method != self.method:
            props = self._props_dict()
            props["method"] = method
            return type(self)(**props)(mean, cov, size=size, **kwargs)
        return super().__call__(mean, cov, size=size, **kwargs)


class PermutationRV(RandomVariable):
    """Random permutations; see :func:`permutation` (its signature follows ``x``).

    As in PyTensor the class has no default signature: give ``signature`` (or the
    deprecated ``ndim_supp`` and ``ndims_params``). A draw has the core shape of ``x``
    (its last ``ndims_params[0]`` dimensions), whatever the signature names them.
    """

    name = "permutation"
    dtype = "int64"
    _print_name = ("permutation", "\\operatorname{permutation}")

    def _supp_shape_from_params(
        self, dist_params: Sequence[TensorVariable], param_shapes: Sequence[Any] | None = None
    ) -> list[Any]:
        """``(x,)`` for a 0-d ``x`` (a permutation of ``arange(x)``), else ``x``'s core shape."""
        (x,) = dist_params
        core = self.ndims_params[0]
        if core == 0:
            return [x.ravel()[0]]
        shape = list(x.shape if param_shapes is None else param_shapes[0])
        return shape[len(shape) - core :]

    def _static_supp_shape(self, dist_params: Sequence[TensorVariable]) -> list[int | None]:
        (x,) = dist_params
        core = self.ndims_params[0]
        if core == 0:
            return [None]
        return list(x.type.shape[x.type.ndim - core :])


def permutation(x: Any, **kwargs: Any) -> Any:
    """A random permutation of ``arange(x)`` (integer ``x``) or of ``x`` along its first axis.

    Every dimension of a tensor ``x`` is core: ``size`` adds batch dimensions.
    """
    x = as_tensor_variable(x)
    if x.ndim == 0:
        if x.dtype not in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32"):
            raise TypeError(f"permutation: a 0-d x must be an integer, got {x} of type {x.type!r}")
        signature, dtype = "()->(x)", x.dtype
    else:
        dims = ",".join(f"x{i}" for i in range(x.ndim))
        signature, dtype = f"({dims})->({dims})", x.dtype
    return PermutationRV(signature=signature, dtype=dtype)(x, **kwargs)


class ChoiceWithoutReplacement(RandomVariable):
    """Distinct draws from the entries of ``a`` along its first core axis (of ``arange(a)``
    for a 0-d ``a``), with probabilities ``p`` when given: what :func:`choice` builds for
    ``replace=False``.

    As in PyTensor, the draws of one batch entry depend on each other, so the number of
    draws is a parameter (``core_shape``, an integer vector, the last parameter) and part
    of the core shape: the signature is ``(a...),(k)->(s...)`` or, with ``p``,
    ``(a...),(a0),(k)->(s...)``. Each backend draws as NumPy's
    ``Generator.choice(a, size=core_shape, replace=False, p=p)`` does, batch entry by
    batch entry.
    """

    name = "choice_without_replacement"
    dtype = None
    _print_name = ("choice_without_replacement", "\\operatorname{choice_without_replacement}")

    @property
    def has_p_param(self) -> bool:
        """Whether the Op takes the probabilities ``p`` (three parameters, not two)."""
        return len(self.ndims_params) == 3

    def _core_shape_entries(self, core_shape: TensorVariable) -> list[Any]:
        if core_shape.ndim > 1:  # batched core shapes must all be equal: take the first
            core_shape = core_shape[(0,) * (core_shape.ndim - 1)]
        return [core_shape[i] for i in range(get_vector_length(core_shape))]

    def _supp_shape_from_params(
        self, dist_params: Sequence[TensorVariable], param_shapes: Sequence[Any] | None = None
    ) -> list[Any]:
        """The number of draws (``core_shape``), then ``a``'s core shape after its first
        axis."""
        a, *_, core_shape = dist_params
        a_shape = list(a.shape if param_shapes is None else param_shapes[0])
        a_core = a_shape[len(a_shape) - self.ndims_params[0] :]
        return self._core_shape_entries(core_shape) + a_core[1:]

    def _static_supp_shape(self, dist_params: Sequence[TensorVariable]) -> list[int | None]:
        a, *_, core_shape = dist_params
        static = _static_vector(core_shape) if core_shape.ndim == 1 else None
        if static is None:
            static = [None] * len(self._core_shape_entries(core_shape))
        a_core = list(a.type.shape[a.ndim - self.ndims_params[0] :])
        return static + a_core[1:]


def _choice_without_replacement(
    a: TensorVariable,
    n: Any,
    size: Any,
    p: Any,
    rng: Any,
    return_next_rng: bool,
    name: str | None,
) -> Any:
    """``choice(a, size, replace=False, p)``: a :class:`ChoiceWithoutReplacement` node
    whose core shape is ``size`` (PyTensor's graph, hence its draws)."""
    core_shape = normalize_size_param(size, "choice")
    entries, known_n = _static_vector(core_shape) or [], _const_int(n)
    known = [e for e in entries if e is not None]
    if known_n is not None and len(known) == len(entries) and math.prod(known) > known_n:
        raise ValueError(
            f"choice: cannot draw {math.prod(known)} distinct entries from {known_n} "
            "without replacement"
        )
    length = get_vector_length(core_shape)
    a_dims = [f"a{i}" for i in range(a.ndim)]
    out_dims = [f"s{i}" for i in range(length)] + a_dims[1:]
    p_dims = a_dims[:1] or ["a"]
    params = [f"({','.join(a_dims)})", f"({length})"]
    if p is not None:
        params.insert(1, f"({','.join(p_dims)})")
    signature = f"{','.join(params)}->({','.join(out_dims)})"
    op = ChoiceWithoutReplacement(signature=signature, dtype=a.dtype)
    dist_params = (a, core_shape) if p is None else (a, p, core_shape)
    out = op(*dist_params, size=None, rng=rng, return_next_rng=return_next_rng)
    if name is not None:
        (out[1] if return_next_rng else out).name = name
    return out


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
    if not replace and size is not None:
        return _choice_without_replacement(a, n, size, p, rng, return_next_rng, name)
    if p is None:
        next_rng, idx = integers(0, n, size=size, rng=rng, return_next_rng=True)
    else:
        next_rng, idx = categorical(p, size=size, rng=rng, return_next_rng=True)
    out = idx if a.ndim == 0 else a[idx]
    if name is not None:
        out.name = name
    return (next_rng, out) if return_next_rng else out


uniform = UniformRV()
triangular = TriangularRV()
beta = BetaRV()
normal = NormalRV()
halfnormal = HalfNormalRV()
lognormal = LogNormalRV()
pareto = ParetoRV()
gumbel = GumbelRV()
exponential = ExponentialRV()
weibull = WeibullRV()
logistic = LogisticRV()
vonmises = VonMisesRV()
multivariate_normal = MvNormalRV(method="cholesky")
dirichlet = DirichletRV()
poisson = PoissonRV()
geometric = GeometricRV()
hypergeometric = HyperGeometricRV()
cauchy = CauchyRV()
halfcauchy = HalfCauchyRV()
invgamma = InvGammaRV()
wald = WaldRV()
truncexpon = TruncExponentialRV()
t = StudentTRV()
bernoulli = BernoulliRV()
laplace = LaplaceRV()
binomial = BinomialRV()
nbinom = negative_binomial = NegBinomialRV()
betabinom = BetaBinomialRV()
gengamma = GenGammaRV()
multinomial = MultinomialRV()
categorical = CategoricalRV()
integers = IntegersRV()
