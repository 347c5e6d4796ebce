"""Distributions over named dimensions (``pytensor.xtensor.random``).

Each function draws from the distribution of the same name in
:mod:`opweave.tensor.random.basic`; its parameters are labelled tensors (or values) that
broadcast by dimension name. Every one takes the keyword arguments

``core_dims``
    The names of the distribution's core dimensions (one per core dimension that its
    signature needs; ``categorical`` and ``multinomial`` need one, ``dirichlet`` one,
    ``multivariate_normal`` two).
``extra_dims``
    ``{name: length}`` of batch dimensions the draws have that no parameter has; they
    come first in the draws.
``rng``
    The generator variable (default: a new shared generator). The draws' ``owner``
    has the advanced generator as ``owner.outputs[0]``.

:func:`as_xrv` makes such a function for any core
:class:`~opweave.tensor.random.op.RandomVariable`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, cast

from opweave.graph.basic import Variable
from opweave.tensor.random import basic as rb
from opweave.tensor.random.op import RandomVariable
from opweave.xtensor.math import sqrt
from opweave.xtensor.random_variable import XRV
from opweave.xtensor.type import XTensorVariable, as_xtensor

__all__ = [
    "as_xrv",
    "bernoulli",
    "beta",
    "betabinom",
    "binomial",
    "categorical",
    "cauchy",
    "chisquare",
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

XRVConstructor = Callable[..., XTensorVariable]


def as_xrv(
    core_op: RandomVariable,
    core_inps_dims_map: Sequence[Sequence[int]] | None = None,
    core_out_dims_map: Sequence[int] | None = None,
    name: str | None = None,
) -> XRVConstructor:
    """Make the named-dimension constructor of a core random variable.

    Parameters
    ----------
    core_op
        The core random variable.
    core_inps_dims_map
        For each parameter, the positions in the user's ``core_dims`` of its core
        dimensions, in the order the core Op expects them. Default: the first
        ``ndims_params[i]`` names, left to right.
    core_out_dims_map
        The same for the core dimensions of one draw. Default: the first ``ndim_supp``
        names.
    name
        The name of the :class:`~opweave.xtensor.random_variable.XRV` Ops it makes.

    Returns
    -------
    Callable
        ``constructor(*params, core_dims=None, extra_dims=None, rng=None)``, returning
        the draws; it raises ``ValueError`` when ``core_dims`` does not have the length
        the maps need.
    """
    inps_maps = (
        [tuple(range(ndim)) for ndim in core_op.ndims_params]
        if core_inps_dims_map is None
        else [tuple(m) for m in core_inps_dims_map]
    )
    out_map = (
        tuple(range(core_op.ndim_supp)) if core_out_dims_map is None else tuple(core_out_dims_map)
    )
    n_needed = max((i + 1 for i in _core_positions(inps_maps, out_map)), default=0)

    def xrv_constructor(
        *params: Any,
        core_dims: Sequence[str] | str | None = None,
        extra_dims: Mapping[str, Any] | None = None,
        rng: Variable | None = None,
    ) -> XTensorVariable:
        if core_dims is None:
            if n_needed:
                raise ValueError(f"{core_op.name} needs {n_needed} core_dims to be specified")
            core_dims = ()
        elif isinstance(core_dims, str):
            core_dims = (core_dims,)
        if len(core_dims) != n_needed:
            raise ValueError(f"{core_op.name} needs {n_needed} core_dims, but got {len(core_dims)}")
        full_core_dims = (
            tuple(tuple(core_dims[i] for i in m) for m in inps_maps),
            tuple(core_dims[i] for i in out_map),
        )
        extra = {} if extra_dims is None else dict(extra_dims)
        op = XRV(core_op, core_dims=full_core_dims, extra_dims=tuple(extra), name=name)
        return cast(XTensorVariable, op(rng, *extra.values(), *params))

    return xrv_constructor


def _core_positions(inps_maps: Sequence[Sequence[int]], out_map: Sequence[int]) -> list[int]:
    """Every position named by the parameter maps and the output map.

    Parameters
    ----------
    inps_maps
        The core dimension positions of each parameter.
    out_map
        Those of one draw.

    Returns
    -------
    list of int
        The positions, in order.
    """
    return [i for m in (*inps_maps, out_map) for i in m]


def _distribution(core_op: RandomVariable, func_name: str) -> XRVConstructor:
    """The public constructor of ``core_op``, named ``func_name``."""
    constructor = as_xrv(core_op)
    constructor.__name__ = constructor.__qualname__ = func_name
    constructor.__module__ = __name__
    constructor.__doc__ = (
        f"Draws of ``{core_op.name}`` over named dimensions.\n\n"
        "Parameters\n----------\n"
        "*params\n    The distribution parameters, as for "
        f"``opweave.tensor.random.{func_name}``.\n"
        "core_dims\n    The names of the core dimensions (none for scalar distributions).\n"
        "extra_dims\n    ``{name: length}`` of extra leading batch dimensions.\n"
        "rng\n    The generator variable (default: a new shared generator).\n\n"
        "Returns\n-------\nXTensorVariable\n    The draws.\n"
    )
    return constructor


bernoulli = _distribution(rb.bernoulli, "bernoulli")
beta = _distribution(rb.beta, "beta")
betabinom = _distribution(rb.betabinom, "betabinom")
binomial = _distribution(rb.binomial, "binomial")
categorical = _distribution(rb.categorical, "categorical")
cauchy = _distribution(rb.cauchy, "cauchy")
dirichlet = _distribution(rb.dirichlet, "dirichlet")
exponential = _distribution(rb.exponential, "exponential")
gamma = _distribution(rb._gamma, "gamma")
gengamma = _distribution(rb.gengamma, "gengamma")
geometric = _distribution(rb.geometric, "geometric")
gumbel = _distribution(rb.gumbel, "gumbel")
halfcauchy = _distribution(rb.halfcauchy, "halfcauchy")
halfnormal = _distribution(rb.halfnormal, "halfnormal")
hypergeometric = _distribution(rb.hypergeometric, "hypergeometric")
integers = _distribution(rb.integers, "integers")
invgamma = _distribution(rb.invgamma, "invgamma")
laplace = _distribution(rb.laplace, "laplace")
logistic = _distribution(rb.logistic, "logistic")
lognormal = _distribution(rb.lognormal, "lognormal")
multinomial = _distribution(rb.multinomial, "multinomial")
negative_binomial = _distribution(rb.negative_binomial, "negative_binomial")
nbinom = negative_binomial
normal = _distribution(rb.normal, "normal")
pareto = _distribution(rb.pareto, "pareto")
poisson = _distribution(rb.poisson, "poisson")
t = _distribution(rb.t, "t")
triangular = _distribution(rb.triangular, "triangular")
truncexpon = _distribution(rb.truncexpon, "truncexpon")
uniform = _distribution(rb.uniform, "uniform")
vonmises = _distribution(rb.vonmises, "vonmises")
wald = _distribution(rb.wald, "wald")
weibull = _distribution(rb.weibull, "weibull")


def multivariate_normal(
    mean: Any,
    cov: Any,
    *,
    core_dims: Sequence[str],
    extra_dims: Mapping[str, Any] | None = None,
    rng: Variable | None = None,
    method: Literal["cholesky", "svd", "eigh"] = "cholesky",
) -> XTensorVariable:
    """Multivariate normal draws over named dimensions.

    Parameters
    ----------
    mean
        The mean; it has exactly one of the two core dimensions.
    cov
        The covariance; it has both core dimensions.
    core_dims
        The two core dimensions, in either order; the draws have the one that ``mean``
        has.
    extra_dims
        ``{name: length}`` of extra leading batch dimensions.
    rng
        The generator variable (default: a new shared generator).
    method
        How the covariance is factorized (as for the core ``MvNormalRV``).

    Returns
    -------
    XTensorVariable
        The draws.

    Raises
    ------
    ValueError
        Unless ``core_dims`` has two names.
    """
    mean = as_xtensor(mean)
    if len(core_dims) != 2:
        raise ValueError(f"multivariate_normal requires 2 core_dims, got {len(core_dims)}")
    # The dimension that ``mean`` has comes first: it is the draws' core dimension.
    if core_dims[0] not in mean.type.dims:
        core_dims = tuple(core_dims)[::-1]
    constructor = as_xrv(rb.MvNormalRV(method=method))
    return constructor(mean, cov, core_dims=core_dims, extra_dims=extra_dims, rng=rng)


def standard_normal(
    extra_dims: Mapping[str, Any] | None = None,
    rng: Variable | None = None,
) -> XTensorVariable:
    """Standard normal draws.

    Parameters
    ----------
    extra_dims
        ``{name: length}`` of the draws' dimensions.
    rng
        The generator variable (default: a new shared generator).

    Returns
    -------
    XTensorVariable
        The draws.
    """
    return normal(0, 1, extra_dims=extra_dims, rng=rng)


def chisquare(
    df: Any,
    extra_dims: Mapping[str, Any] | None = None,
    rng: Variable | None = None,
) -> XTensorVariable:
    """Chi-square draws, as gamma draws of shape ``df / 2`` and scale 2.

    Parameters
    ----------
    df
        The degrees of freedom.
    extra_dims
        ``{name: length}`` of extra leading batch dimensions.
    rng
        The generator variable (default: a new shared generator).

    Returns
    -------
    XTensorVariable
        The draws.
    """
    return gamma(df / 2.0, 2.0, extra_dims=extra_dims, rng=rng)


def rayleigh(
    scale: Any,
    extra_dims: Mapping[str, Any] | None = None,
    rng: Variable | None = None,
) -> XTensorVariable:
    """Rayleigh draws, as ``scale`` times the square root of chi-square(2) draws.

    Parameters
    ----------
    scale
        The scale.
    extra_dims
        ``{name: length}`` of extra leading batch dimensions.
    rng
        The generator variable (default: a new shared generator).

    Returns
    -------
    XTensorVariable
        The draws.
    """
    # ``scale * 0 + 2`` carries the dimensions of ``scale`` to the chi-square draws.
    df = scale * 0 + 2
    return cast(XTensorVariable, sqrt(chisquare(df, extra_dims=extra_dims, rng=rng)) * scale)
