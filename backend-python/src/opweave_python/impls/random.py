"""NumPy implementations of the random variables of :mod:`opweave.tensor.random`.

Every node copies its input generator (unless the Op is ``inplace``), draws with it and
returns it advanced. Each distribution draws exactly as PyTensor's does for the same
generator state: with the NumPy ``Generator`` method of the distribution, or the SciPy
distribution's ``rvs`` given the generator, called the same way.

An Op class defined outside opweave that defines its own ``rng_fn`` (or, for a
:class:`~opweave.tensor.random.basic.ScipyRandomVariable`, ``rng_fn_scipy``) is drawn
with it, called as ``op.rng_fn(rng, *dist_params, size)``; so is any RandomVariable
subclass without an entry here (the default ``rng_fn`` calls the ``Generator`` method
named like the Op).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from opweave.graph.basic import Apply
from opweave.tensor.random.basic import (
    BernoulliRV,
    BetaBinomialRV,
    CategoricalRV,
    CauchyRV,
    ChoiceWithoutReplacement,
    DirichletRV,
    GenGammaRV,
    GumbelRV,
    HalfCauchyRV,
    HalfNormalRV,
    InvGammaRV,
    MultinomialRV,
    MvNormalRV,
    NegBinomialRV,
    ParetoRV,
    PermutationRV,
    StudentTRV,
    TruncExponentialRV,
    scipy_draws_shape,
)
from opweave.tensor.random.op import RandomVariable, RNGConsumerOp
from opweave.tensor.random.utils import custom_rng_deepcopy
from opweave_python.impls import PERFORMS as _ALL_PERFORMS

Size = tuple[int, ...] | None
Draw = Callable[[RandomVariable, np.random.Generator, list[np.ndarray], Size], Any]


def _rng_fn(
    op: RandomVariable, rng: np.random.Generator, params: list[np.ndarray], size: Size
) -> Any:
    """The Op's own ``rng_fn(rng, *dist_params, size)``."""
    return op.rng_fn(rng, *params, size)


def _draws_itself(cls: type) -> bool:
    """Whether a class defined outside opweave, before any opweave class in ``cls``'s
    MRO, defines ``rng_fn`` or ``rng_fn_scipy``."""
    for base in cls.__mro__:
        if base.__module__.split(".")[0] == "opweave":
            return False
        if "rng_fn" in vars(base) or "rng_fn_scipy" in vars(base):
            return True
    return False


def _scipy(dist: str, call: Callable[..., Any]) -> Draw:
    """A draw with ``call(scipy.stats.<dist>, rng, *params, size)``, shaped as NumPy's."""

    def draw(
        op: RandomVariable, rng: np.random.Generator, params: list[np.ndarray], size: Size
    ) -> Any:
        from scipy import stats  # SciPy's statistics load only when a node draws with them

        return scipy_draws_shape(call(getattr(stats, dist), rng, *params, size), params, size)

    return draw


def _loc_scale(d: Any, rng: np.random.Generator, loc: Any, scale: Any, size: Size) -> Any:
    return d.rvs(loc=loc, scale=scale, size=size, random_state=rng)


def _halfnormal(d: Any, rng: np.random.Generator, loc: Any, scale: Any, size: Size) -> Any:
    return d.rvs(loc, scale, random_state=rng, size=size)


def _pareto(d: Any, rng: np.random.Generator, b: Any, scale: Any, size: Size) -> Any:
    return d.rvs(b, scale=scale, size=size, random_state=rng)


def _shape_loc_scale(
    d: Any, rng: np.random.Generator, a: Any, loc: Any, scale: Any, size: Size
) -> Any:
    return d.rvs(a, loc=loc, scale=scale, size=size, random_state=rng)


def _shapes(d: Any, rng: np.random.Generator, *args: Any) -> Any:
    *params, size = args
    return d.rvs(*params, size=size, random_state=rng)


def _gengamma(d: Any, rng: np.random.Generator, alpha: Any, p: Any, lambd: Any, size: Size) -> Any:
    return d.rvs(alpha / p, p, scale=lambd, size=size, random_state=rng)


def _bernoulli(
    op: RandomVariable, rng: np.random.Generator, params: list[np.ndarray], size: Size
) -> Any:
    (p,) = params
    return rng.binomial(1, p, size=size)


def _invgamma(
    op: RandomVariable, rng: np.random.Generator, params: list[np.ndarray], size: Size
) -> Any:
    shape, scale = params
    return 1 / rng.gamma(shape, 1 / scale, size)


_searchsorted_core = np.vectorize(np.searchsorted, signature="(p),()->()")


def _categorical(
    op: RandomVariable, rng: np.random.Generator, params: list[np.ndarray], size: Size
) -> Any:
    # Like PyTensor, ``p`` is not validated: each draw is the left insertion point of
    # a uniform in ``cumsum(p)``, also when ``p`` is not a probability vector.
    (p,) = params
    if size is not None:
        p = np.broadcast_to(p, size + p.shape[-1:])
    cum = np.cumsum(p, axis=-1)
    u = rng.uniform(size=p.shape[:-1])
    if np.all(np.diff(cum, axis=-1) >= 0):
        return np.sum(cum < u[..., None], axis=-1)  # the first i with cum[i] >= u
    return _searchsorted_core(cum, u)


def _batch_loop(
    rng_draw: Callable[[np.ndarray], np.ndarray], core: np.ndarray, dtype: Any
) -> np.ndarray:
    """``rng_draw`` of each core entry of ``core`` (batch dimensions first, core last)."""
    out = np.empty(core.shape, dtype=dtype)
    for idx in np.ndindex(*core.shape[:-1]):
        out[idx] = rng_draw(idx)
    return out


def _dirichlet(
    op: RandomVariable, rng: np.random.Generator, params: list[np.ndarray], size: Size
) -> Any:
    (alphas,) = params
    if alphas.ndim == 1:
        return rng.dirichlet(alphas, size=size)
    if size is not None:
        alphas = np.broadcast_to(alphas, size + alphas.shape[-1:])
    return _batch_loop(lambda idx: rng.dirichlet(alphas[idx]), alphas, np.float64)


def _multinomial(
    op: RandomVariable, rng: np.random.Generator, params: list[np.ndarray], size: Size
) -> Any:
    n, p = params
    if n.ndim == 0 and p.ndim <= 1:
        return rng.multinomial(n, p, size=size)
    if size is None:
        batch = np.broadcast_shapes(n.shape, p.shape[:-1])
    else:
        batch = size
    n = np.broadcast_to(n, batch)
    p = np.broadcast_to(p, batch + p.shape[-1:])
    return _batch_loop(lambda idx: rng.multinomial(n[idx], p[idx]), p, np.int64)


def _mvnormal(
    op: RandomVariable, rng: np.random.Generator, params: list[np.ndarray], size: Size
) -> Any:
    mean, cov = params
    if size is None:
        size = np.broadcast_shapes(mean.shape[:-1], cov.shape[:-2])
    method = getattr(op, "method", "cholesky")
    if method == "cholesky":
        factor = np.linalg.cholesky(cov)
    elif method == "svd":
        factor, s, _ = np.linalg.svd(cov)
        factor = factor * np.sqrt(s)[..., None, :]
    else:
        w, factor = np.linalg.eigh(cov)
        factor = factor * np.sqrt(w)[..., None, :]
    out = rng.normal(size=(*size, mean.shape[-1]))
    return np.einsum("...ij,...j->...i", factor, out, optimize=False) + mean


def _permutation(
    op: RandomVariable, rng: np.random.Generator, params: list[np.ndarray], size: Size
) -> Any:
    (x,) = params
    batch_ndim = x.ndim - op.ndims_params[0]
    if not batch_ndim:
        return rng.permutation(x.item() if op.ndims_params[0] == 0 else x)
    if size is None:
        size = x.shape[:batch_ndim]
    else:
        x = np.broadcast_to(x, size + x.shape[batch_ndim:])
    if op.ndims_params[0] == 0:
        n = int(x.reshape(-1)[0]) if x.size else 0
        out = np.empty((*size, n), dtype=np.int64)
    else:
        out = np.empty(size + x.shape[batch_ndim:], dtype=x.dtype)
    for idx in np.ndindex(*size):
        out[idx] = rng.permutation(x[idx].item() if op.ndims_params[0] == 0 else x[idx])
    return out


def _choice_without_replacement(
    op: ChoiceWithoutReplacement, rng: np.random.Generator, params: list[np.ndarray], size: Size
) -> Any:
    """``Generator.choice(..., replace=False)`` per batch entry, as PyTensor draws."""
    if op.has_p_param:
        a, p, core_shape = params
    else:
        (a, core_shape), p = params, None
    if core_shape.ndim > 1:  # batched core shapes are all equal: take the first
        core_shape = core_shape[(0,) * (core_shape.ndim - 1)]
    core = tuple(int(s) for s in core_shape)
    batch_ndim = a.ndim - op.ndims_params[0]
    if not batch_ndim:
        # NumPy's choice refuses size=() for a batched-looking a: None draws one entry.
        return rng.choice(a, p=p, size=core or None, replace=False)
    if size is None:
        shapes = [a.shape[:batch_ndim]] + ([] if p is None else [p.shape[:batch_ndim]])
        size = tuple(np.broadcast_shapes(*shapes))
    a = np.broadcast_to(a, size + a.shape[batch_ndim:])
    if p is not None:
        p = np.broadcast_to(p, size + p.shape[batch_ndim:])
    out = np.empty(size + core + a.shape[len(size) + 1 :], dtype=a.dtype)
    for idx in np.ndindex(*size):
        out[idx] = rng.choice(a[idx], p=None if p is None else p[idx], size=core, replace=False)
    return out


def _after_rng_consumer(op: Any, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """An Op that consumes generators and is something else too (e.g. a graph of Ops):
    run the implementation of the next class of its MRO that has one."""
    mro = type(op).__mro__
    for base in mro[mro.index(RNGConsumerOp) + 1 :]:
        entry = _ALL_PERFORMS.get(base)
        if entry is not None:
            entry(op, node, inputs, out)
            return
    raise NotImplementedError(
        f"{type(op).__name__}: an RNGConsumerOp needs its own perform or another base "
        "class with an implementation"
    )


#: Op class -> ``draw(op, rng, params, size)``; RandomVariable (and the classes without
#: an entry) draw with the Op's ``rng_fn``.
DRAWS: MappingProxyType[type, Draw] = MappingProxyType(
    {
        RandomVariable: _rng_fn,
        BernoulliRV: _bernoulli,
        InvGammaRV: _invgamma,
        HalfNormalRV: _scipy("halfnorm", _halfnormal),
        ParetoRV: _scipy("pareto", _pareto),
        GumbelRV: _scipy("gumbel_r", _loc_scale),
        CauchyRV: _scipy("cauchy", _loc_scale),
        HalfCauchyRV: _scipy("halfcauchy", _loc_scale),
        TruncExponentialRV: _scipy("truncexpon", _shape_loc_scale),
        StudentTRV: _scipy("t", _shape_loc_scale),
        NegBinomialRV: _scipy("nbinom", _shapes),
        BetaBinomialRV: _scipy("betabinom", _shapes),
        GenGammaRV: _scipy("gengamma", _gengamma),
        CategoricalRV: _categorical,
        DirichletRV: _dirichlet,
        MultinomialRV: _multinomial,
        MvNormalRV: _mvnormal,
        PermutationRV: _permutation,
        ChoiceWithoutReplacement: _choice_without_replacement,
    }
)


def _performer(draw: Draw) -> Callable[..., None]:
    def perform(
        op: RandomVariable, node: Apply, inputs: Sequence[Any], out: list[list[Any]]
    ) -> None:
        """Draw with a copy of the generator (the generator itself when ``inplace``)."""
        rng, size, *params = inputs
        if not op.inplace:
            rng = custom_rng_deepcopy(rng)
        shape = None if size is None else tuple(int(s) for s in size)
        fn = _rng_fn if _draws_itself(type(op)) else draw
        try:
            value = fn(op, rng, [np.asarray(p) for p in params], shape)
        except ValueError as exc:
            raise ValueError(f"{op.name}: invalid parameters or size: {exc}") from exc
        out[0][0] = rng
        out[1][0] = np.asarray(value, dtype=node.outputs[1].type.dtype)  # type: ignore[attr-defined]

    return perform


#: Op class -> ``perform(op, node, inputs, output_storage)``. Read-only.
PERFORMS: MappingProxyType[type, Callable[..., None]] = MappingProxyType(
    {
        **{cls: _performer(draw) for cls, draw in DRAWS.items()},
        RNGConsumerOp: _after_rng_consumer,
    }
)
