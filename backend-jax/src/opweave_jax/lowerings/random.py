"""Lowerings of random variables to ``jax.random``.

A random generator's value inside the jitted function is a JAX key: the two ``uint32`` words
of a ``threefry2x32`` key (the linker turns a ``numpy.random.Generator`` into one with
:func:`~opweave_jax.values.key_data_of`, and back). Each random variable node splits the
key it receives in two, draws with one half and returns the other as its next generator,
so that ``updates`` of a shared generator carry the stream from call to call, as in
PyTensor's JAX backend. The draws follow the distributions of the NumPy/SciPy ones the
other linkers use, not their streams. The samplers of the distributions ``jax.random`` does
not draw itself (von Mises, hypergeometric, truncated exponential) are in
:mod:`~opweave_jax.lowerings.random_more`.

A random variable whose distribution has no sampler here (or a subclass with its own
``rng_fn``) is refused when the function is compiled, with a ``NoImplementationError``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from opweave.graph.basic import Apply
from opweave.graph.utils import NoImplementationError
from opweave.tensor.random import basic as rb
from opweave.tensor.random.op import RandomVariable
from opweave.tensor.type import TensorType
from opweave_jax.lowerings.random_more import SAMPLERS as MORE_SAMPLERS
from opweave_jax.values import is_static, key_data_of, static_ints

__all__ = ["LOWERINGS", "SAMPLERS"]

Fn = Callable[..., Any]
#: ``sampler(key, batch_shape, dtype, *params)``: draws of the batch shape (and the core
#: shape the parameters give), every parameter with the batch rank.
Sampler = Callable[..., Any]


def _float(dtype: Any) -> Any:
    """``dtype`` when it is a float dtype, else float64 (what integer draws are computed in)."""
    return dtype if np.dtype(dtype).kind == "f" else np.dtype("float64")


def _bcast(value: Any, shape: tuple[int, ...]) -> Any:
    return jnp.broadcast_to(value, shape)


def _normal(key: Any, shape: tuple[int, ...], dtype: Any, loc: Any, scale: Any) -> Any:
    return loc + scale * jax.random.normal(key, shape, _float(dtype))


def _uniform(key: Any, shape: tuple[int, ...], dtype: Any, low: Any, high: Any) -> Any:
    return low + (high - low) * jax.random.uniform(key, shape, _float(dtype))


def _halfnormal(key: Any, shape: tuple[int, ...], dtype: Any, loc: Any, scale: Any) -> Any:
    return loc + scale * jnp.abs(jax.random.normal(key, shape, _float(dtype)))


def _lognormal(key: Any, shape: tuple[int, ...], dtype: Any, mean: Any, sigma: Any) -> Any:
    return jnp.exp(mean + sigma * jax.random.normal(key, shape, _float(dtype)))


def _exponential(key: Any, shape: tuple[int, ...], dtype: Any, scale: Any) -> Any:
    return scale * jax.random.exponential(key, shape, _float(dtype))


def _gamma(key: Any, shape: tuple[int, ...], dtype: Any, alpha: Any, scale: Any) -> Any:
    draws = jax.random.gamma(key, _bcast(alpha, shape), shape, _float(dtype))
    return draws * scale


def _invgamma(key: Any, shape: tuple[int, ...], dtype: Any, alpha: Any, scale: Any) -> Any:
    return scale / jax.random.gamma(key, _bcast(alpha, shape), shape, _float(dtype))


def _beta(key: Any, shape: tuple[int, ...], dtype: Any, a: Any, b: Any) -> Any:
    return jax.random.beta(key, _bcast(a, shape), _bcast(b, shape), shape, _float(dtype))


def _bernoulli(key: Any, shape: tuple[int, ...], dtype: Any, p: Any) -> Any:
    return jax.random.bernoulli(key, _bcast(p, shape), shape)


def _binomial(key: Any, shape: tuple[int, ...], dtype: Any, n: Any, p: Any) -> Any:
    n = _bcast(jnp.asarray(n, "float64"), shape)
    return jax.random.binomial(key, n, _bcast(jnp.asarray(p, "float64"), shape), shape)


def _poisson(key: Any, shape: tuple[int, ...], dtype: Any, lam: Any) -> Any:
    return jax.random.poisson(key, _bcast(lam, shape), shape, dtype=np.dtype("int64"))


def _geometric(key: Any, shape: tuple[int, ...], dtype: Any, p: Any) -> Any:
    return jax.random.geometric(key, _bcast(p, shape), shape, dtype=np.dtype("int64"))


def _integers(key: Any, shape: tuple[int, ...], dtype: Any, low: Any, high: Any) -> Any:
    return jax.random.randint(key, shape, low, high, dtype)


def _located(sample: Callable[..., Any]) -> Sampler:
    """A sampler of ``loc + scale * sample(key, shape, dtype)``."""

    def draw(key: Any, shape: tuple[int, ...], dtype: Any, loc: Any, scale: Any) -> Any:
        return loc + scale * sample(key, shape, _float(dtype))

    return draw


def _halfcauchy(key: Any, shape: tuple[int, ...], dtype: Any, loc: Any, scale: Any) -> Any:
    return loc + scale * jnp.abs(jax.random.cauchy(key, shape, _float(dtype)))


def _pareto(key: Any, shape: tuple[int, ...], dtype: Any, b: Any, scale: Any) -> Any:
    return scale * jax.random.pareto(key, _bcast(b, shape), shape, _float(dtype))


def _t(key: Any, shape: tuple[int, ...], dtype: Any, df: Any, loc: Any, scale: Any) -> Any:
    return loc + scale * jax.random.t(key, _bcast(df, shape), shape, _float(dtype))


def _weibull(key: Any, shape: tuple[int, ...], dtype: Any, k: Any) -> Any:
    return jax.random.weibull_min(key, 1.0, _bcast(k, shape), shape, _float(dtype))


def _wald(key: Any, shape: tuple[int, ...], dtype: Any, mean: Any, scale: Any) -> Any:
    """Inverse Gaussian draws of ``mean`` and shape ``scale``: ``scale`` times a draw of
    ``mean / scale`` and shape 1 (``jax.random.wald``)."""
    mean, scale = _bcast(mean, shape), _bcast(scale, shape)
    return scale * jax.random.wald(key, mean / scale, shape, _float(dtype))


def _gengamma(key: Any, shape: tuple[int, ...], dtype: Any, alpha: Any, p: Any, lambd: Any) -> Any:
    """``lambd * G ** (1 / p)`` with ``G ~ Gamma(alpha / p)``: SciPy's ``gengamma(alpha / p,
    p, scale=lambd)``."""
    alpha, p = _bcast(alpha, shape), _bcast(p, shape)
    return lambd * jax.random.gamma(key, alpha / p, shape, _float(dtype)) ** (1 / p)


def _negative_binomial(key: Any, shape: tuple[int, ...], dtype: Any, n: Any, p: Any) -> Any:
    """Failures before ``n`` successes: Poisson draws of a ``Gamma(n, (1 - p) / p)`` rate."""
    gamma_key, poisson_key = jax.random.split(key)
    n = _bcast(jnp.asarray(n, "float64"), shape)
    p = _bcast(jnp.asarray(p, "float64"), shape)
    rate = jax.random.gamma(gamma_key, n, shape, np.dtype("float64")) * (1 - p) / p
    return jax.random.poisson(poisson_key, rate, shape, dtype=np.dtype("int64"))


def _beta_binomial(key: Any, shape: tuple[int, ...], dtype: Any, n: Any, a: Any, b: Any) -> Any:
    """Binomial draws of ``n`` trials with a ``Beta(a, b)`` probability."""
    beta_key, binomial_key = jax.random.split(key)
    a = _bcast(jnp.asarray(a, "float64"), shape)
    b = _bcast(jnp.asarray(b, "float64"), shape)
    p = jax.random.beta(beta_key, a, b, shape, np.dtype("float64"))
    return _binomial(binomial_key, shape, dtype, n, p)


def _triangular(
    key: Any, shape: tuple[int, ...], dtype: Any, left: Any, mode: Any, right: Any
) -> Any:
    """Triangular draws by the inverse of the distribution function."""
    u = jax.random.uniform(key, shape, _float(dtype))
    width = right - left
    below = left + jnp.sqrt(u * width * (mode - left))
    above = right - jnp.sqrt((1 - u) * width * (right - mode))
    return jnp.where(u < (mode - left) / width, below, above)


def _categorical(key: Any, shape: tuple[int, ...], dtype: Any, p: Any) -> Any:
    logits = jnp.log(_bcast(p, (*shape, p.shape[-1])))
    return jax.random.categorical(key, logits, axis=-1, shape=shape)


def _dirichlet(key: Any, shape: tuple[int, ...], dtype: Any, alphas: Any) -> Any:
    alphas = _bcast(alphas, (*shape, alphas.shape[-1]))
    return jax.random.dirichlet(key, alphas, shape, _float(dtype))


def _mvnormal(method: str) -> Sampler:
    def draw(key: Any, shape: tuple[int, ...], dtype: Any, mean: Any, cov: Any) -> Any:
        n = mean.shape[-1]
        mean = _bcast(mean, (*shape, n))
        cov = _bcast(cov, (*shape, n, n))
        return jax.random.multivariate_normal(key, mean, cov, shape, _float(dtype), method)

    return draw


def _multinomial(key: Any, shape: tuple[int, ...], dtype: Any, n: Any, p: Any) -> Any:
    k = p.shape[-1]
    n = _bcast(jnp.asarray(n, "float64"), shape)
    return jax.random.multinomial(key, n, _bcast(p, (*shape, k)), shape=(*shape, k))


def _permutation(core_ndim: int) -> Sampler:
    """Independent permutations (``arange(x)`` for 0-d ``x``, else ``x`` along its first
    core axis) for each batch entry: the order of i.i.d. uniform draws."""

    def draw(key: Any, shape: tuple[int, ...], dtype: Any, x: Any) -> Any:
        if core_ndim == 0:
            n = static_ints(x, "permutation: x")[0]
            keys = jax.random.uniform(key, (*shape, n))
            return jnp.argsort(keys, axis=-1)
        core = x.shape[x.ndim - core_ndim :]
        x = _bcast(x, (*shape, *core))
        order = jnp.argsort(jax.random.uniform(key, (*shape, core[0])), axis=-1)
        index = order.reshape((*shape, core[0]) + (1,) * (core_ndim - 1))
        return jnp.take_along_axis(x, index, axis=len(shape))

    return draw


def _choice_without_replacement(core_ndim: int, has_p: bool) -> Sampler:
    """Distinct entries of ``a`` (of ``arange(a)`` for 0-d ``a``) along its first core axis,
    ``core_shape`` of them per batch entry, each batch entry with a key of its own
    (``jax.random.choice(..., replace=False)``); ``core_shape`` and a 0-d ``a`` must be
    static."""

    def one(key: Any, a: Any, p: Any, core: tuple[int, ...]) -> Any:
        population = static_ints(a, "choice: a")[0] if core_ndim == 0 else a
        return jax.random.choice(key, population, core, replace=False, p=p, axis=0)

    def draw(key: Any, shape: tuple[int, ...], dtype: Any, a: Any, *rest: Any) -> Any:
        p, core_shape = (rest[0], rest[1]) if has_p else (None, rest[0])
        core_shape = np.asarray(core_shape) if is_static(core_shape) else core_shape
        core = static_ints(core_shape.reshape(-1)[: core_shape.shape[-1]], "choice: size")
        if not shape:
            return one(key, a, p, core).astype(dtype)
        if core_ndim == 0:  # the population sizes, one per batch entry, must be static
            static_ints(a, "choice: a")
            a = np.broadcast_to(np.asarray(a), shape)
        else:
            a = _bcast(a, (*shape, *a.shape[a.ndim - core_ndim :]))
        if p is not None:
            p = _bcast(p, (*shape, p.shape[-1]))
        keys = jax.random.split(key, int(np.prod(shape)))
        draws = [
            one(k, a[idx], None if p is None else p[idx], core)
            for k, idx in zip(keys, np.ndindex(*shape), strict=True)
        ]
        return jnp.stack(draws).reshape(*shape, *draws[0].shape).astype(dtype)

    return draw


#: RandomVariable class -> its sampler (or a maker of one from the Op, for the Ops whose
#: sampler depends on their properties).
SAMPLERS: dict[type, Sampler] = {
    rb.NormalRV: _normal,
    rb.UniformRV: _uniform,
    rb.HalfNormalRV: _halfnormal,
    rb.LogNormalRV: _lognormal,
    rb.ExponentialRV: _exponential,
    rb.GammaRV: _gamma,
    rb.InvGammaRV: _invgamma,
    rb.BetaRV: _beta,
    rb.BernoulliRV: _bernoulli,
    rb.BinomialRV: _binomial,
    rb.PoissonRV: _poisson,
    rb.GeometricRV: _geometric,
    rb.IntegersRV: _integers,
    rb.CauchyRV: _located(jax.random.cauchy),
    rb.HalfCauchyRV: _halfcauchy,
    rb.GumbelRV: _located(jax.random.gumbel),
    rb.LaplaceRV: _located(jax.random.laplace),
    rb.LogisticRV: _located(jax.random.logistic),
    rb.ParetoRV: _pareto,
    rb.StudentTRV: _t,
    rb.WeibullRV: _weibull,
    rb.CategoricalRV: _categorical,
    rb.DirichletRV: _dirichlet,
    rb.MultinomialRV: _multinomial,
    rb.WaldRV: _wald,
    rb.GenGammaRV: _gengamma,
    rb.NegBinomialRV: _negative_binomial,
    rb.BetaBinomialRV: _beta_binomial,
    rb.TriangularRV: _triangular,
    **MORE_SAMPLERS,  # von Mises, hypergeometric, truncated exponential
}


def _defines(cls: type, name: str) -> type | None:
    """The class of ``cls``'s MRO that defines ``name``."""
    return next((k for k in cls.__mro__ if name in vars(k)), None)


def _sampler_of(op: RandomVariable) -> Sampler | None:
    cls = type(op)
    if isinstance(op, rb.MvNormalRV):
        base: type = rb.MvNormalRV
        sampler: Sampler | None = _mvnormal(op.method)
    elif isinstance(op, rb.PermutationRV):
        base, sampler = rb.PermutationRV, _permutation(op.ndims_params[0])
    elif isinstance(op, rb.ChoiceWithoutReplacement):
        base = rb.ChoiceWithoutReplacement
        sampler = _choice_without_replacement(op.ndims_params[0], op.has_p_param)
    else:
        base = next((k for k in cls.__mro__ if k in SAMPLERS), RandomVariable)
        sampler = SAMPLERS.get(base)
    if sampler is None or _defines(cls, "rng_fn") is not _defines(base, "rng_fn"):
        return None  # a subclass drawing otherwise (its own rng_fn) is not this sampler
    return sampler


def _key(rng: Any) -> Any:
    """The JAX key of a generator value: key data (traced or not), or a NumPy generator
    (a constant of the graph)."""
    if isinstance(rng, np.random.Generator):
        rng = key_data_of(rng)
    return jax.random.wrap_key_data(jnp.asarray(rng, jnp.uint32), impl="threefry2x32")


def random_variable(op: RandomVariable, node: Apply) -> Fn:
    """``(rng, size, *params) -> (next key, draws)`` through ``jax.random``.

    Raises
    ------
    opweave.graph.utils.NoImplementationError
        When ``jax.random`` has no sampler of ``op``'s distribution here.
    """
    sampler = _sampler_of(op)
    if sampler is None:
        raise NoImplementationError(
            f"jax linker: no jax.random sampler for the random variable {op} (node {node}); "
            f"the jax linker draws {', '.join(sorted(c.__name__ for c in SAMPLERS))}, "
            "MvNormalRV, PermutationRV and ChoiceWithoutReplacement"
        )
    out_type = node.outputs[1].type
    dtype = np.dtype(out_type.dtype) if isinstance(out_type, TensorType) else None
    ndims = op.ndims_params

    def run(rng: Any, size: Any, *params: Any) -> Any:
        if size is None:
            shapes = [np.shape(p) for p in params]
            batch = np.broadcast_shapes(
                *(s[: len(s) - nd] for s, nd in zip(shapes, ndims, strict=True))
            )
        else:
            batch = static_ints(size, f"{op.name}: size")
        new_key, draw_key = jax.random.split(_key(rng))
        draws = sampler(draw_key, tuple(batch), dtype, *params)
        return jax.random.key_data(new_key), draws

    return run


#: The class this module lowers (every subclass goes through :func:`random_variable`).
LOWERINGS = {RandomVariable: random_variable}
