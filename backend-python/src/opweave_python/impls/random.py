"""NumPy implementations of the random variables of :mod:`opweave.tensor.random`.

Every node copies its input generator (unless the Op is ``inplace``), draws with it and
returns it advanced. Distributions whose core draw is a scalar use NumPy's broadcasting
directly; the others loop over the batch dimensions.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from opweave.graph.basic import Apply
from opweave.tensor.random.basic import (
    BernoulliRV,
    BetaRV,
    BinomialRV,
    CategoricalRV,
    DirichletRV,
    ExponentialRV,
    GammaRV,
    IntegersRV,
    MvNormalRV,
    NormalRV,
    PermutationRV,
    PoissonRV,
    UniformRV,
)
from opweave.tensor.random.op import RandomVariable

Size = tuple[int, ...] | None
Draw = Callable[[RandomVariable, np.random.Generator, list[np.ndarray], Size], Any]


def _batched(
    core: Callable[..., np.ndarray],
    core_shape: Callable[..., tuple[int, ...]],
) -> Draw:
    """A draw looping ``core(rng, *core_params)`` over the broadcast batch dimensions."""

    def draw(
        op: RandomVariable, rng: np.random.Generator, params: list[np.ndarray], size: Size
    ) -> Any:
        batch_shapes = [
            p.shape[: p.ndim - nd] for p, nd in zip(params, op.ndims_params, strict=True)
        ]
        batch = np.broadcast_shapes(*batch_shapes) if size is None else size
        params = [
            np.broadcast_to(p, batch + p.shape[p.ndim - nd :])
            for p, nd in zip(params, op.ndims_params, strict=True)
        ]
        if not all(batch):  # no draws: only the core shape matters
            cores = [np.zeros(p.shape[len(batch) :], dtype=p.dtype) for p in params]
            return np.empty(batch + tuple(core_shape(op, *cores)))
        results = [core(op, rng, *(p[idx] for p in params)) for idx in np.ndindex(*batch)]
        return np.stack(results).reshape(batch + results[0].shape) if batch else results[0]

    return draw


def _method(name: str) -> Draw:
    """The draw of the ``Generator`` method ``name``, which broadcasts its parameters."""

    def draw(
        op: RandomVariable, rng: np.random.Generator, params: list[np.ndarray], size: Size
    ) -> Any:
        return getattr(rng, name)(*params, size=size)

    return draw


def _bernoulli(
    op: RandomVariable, rng: np.random.Generator, params: list[np.ndarray], size: Size
) -> Any:
    (p,) = params
    return rng.binomial(1, p, size=size)


def _categorical(
    op: RandomVariable, rng: np.random.Generator, params: list[np.ndarray], size: Size
) -> Any:
    (p,) = params
    if np.any(p < 0) or not np.allclose(p.sum(axis=-1), 1.0):
        raise ValueError(
            "the probabilities p must be non-negative and sum to 1 along the last axis"
        )
    if size is not None:
        p = np.broadcast_to(p, size + p.shape[-1:])
    cum = np.cumsum(p, axis=-1)
    u = rng.uniform(size=p.shape[:-1])
    idx = np.sum(u[..., None] >= cum, axis=-1)
    return np.minimum(idx, p.shape[-1] - 1)


def _permutation_core(op: RandomVariable, rng: np.random.Generator, x: np.ndarray) -> np.ndarray:
    return rng.permutation(int(x) if op.ndims_params[0] == 0 else x)


def _permutation_shape(op: RandomVariable, x: np.ndarray) -> tuple[int, ...]:
    return (int(x),) if op.ndims_params[0] == 0 else x.shape


def _mvnormal_core(
    op: RandomVariable, rng: np.random.Generator, mean: np.ndarray, cov: np.ndarray
) -> np.ndarray:
    return rng.multivariate_normal(mean, cov)


def _dirichlet_core(op: RandomVariable, rng: np.random.Generator, alphas: np.ndarray) -> np.ndarray:
    return rng.dirichlet(alphas)


def _last_axis(op: RandomVariable, first: np.ndarray, *rest: np.ndarray) -> tuple[int, ...]:
    return first.shape[-1:]


def _by_name(
    op: RandomVariable, rng: np.random.Generator, params: list[np.ndarray], size: Size
) -> Any:
    """The ``Generator`` method named like the Op (as PyTensor's default draw does)."""
    method = getattr(np.random.Generator, op.name, None)
    if method is None or op.name.startswith("_"):
        raise TypeError(
            f"{type(op).__name__} {op.name!r}: numpy.random.Generator has no method of that "
            "name; register a draw for the Op class in opweave_python.impls.random.DRAWS"
        )
    return method(rng, *params, size=size)


#: Op class -> ``draw(op, rng, params, size)``.
DRAWS: MappingProxyType[type, Draw] = MappingProxyType(
    {
        RandomVariable: _by_name,
        NormalRV: _method("normal"),
        UniformRV: _method("uniform"),
        IntegersRV: _method("integers"),
        BernoulliRV: _bernoulli,
        BinomialRV: _method("binomial"),
        PoissonRV: _method("poisson"),
        GammaRV: _method("gamma"),
        BetaRV: _method("beta"),
        ExponentialRV: _method("exponential"),
        CategoricalRV: _categorical,
        PermutationRV: _batched(_permutation_core, _permutation_shape),
        MvNormalRV: _batched(_mvnormal_core, _last_axis),
        DirichletRV: _batched(_dirichlet_core, _last_axis),
    }
)


def _performer(draw: Draw) -> Callable[..., None]:
    def perform(
        op: RandomVariable, node: Apply, inputs: Sequence[Any], out: list[list[Any]]
    ) -> None:
        """Draw with a copy of the generator (the generator itself when ``inplace``)."""
        rng, size, *params = inputs
        if not op.inplace:
            rng = copy.deepcopy(rng)
        shape = None if size is None else tuple(int(s) for s in size)
        try:
            value = draw(op, rng, [np.asarray(p) for p in params], shape)
        except ValueError as exc:
            raise ValueError(f"{op.name}: invalid parameters or size: {exc}") from exc
        out[0][0] = rng
        out[1][0] = np.asarray(value, dtype=node.outputs[1].type.dtype)  # type: ignore[attr-defined]

    return perform


#: Op class -> ``perform(op, node, inputs, output_storage)``. Read-only.
PERFORMS: MappingProxyType[type, Callable[..., None]] = MappingProxyType(
    {cls: _performer(draw) for cls, draw in DRAWS.items()}
)
