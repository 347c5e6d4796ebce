"""Random streams and parameter helpers (``pytensor.tensor.random.utils``).

A :class:`RandomStream` makes random variables that each own a shared generator whose
``default_update`` is the advanced generator: every call of a compiled function then
draws anew, and one seed reproduces the whole sequence of draws.

:func:`normalize_size_param`, :func:`broadcast_params`, :func:`params_broadcast_shapes`,
:func:`explicit_expand_dims` and :func:`compute_batch_shape` prepare the ``size`` and the
parameters of random variables: symbolically for graph variables, with NumPy for arrays.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Sequence
from itertools import zip_longest
from types import ModuleType
from typing import Any, cast

import numpy as np

from opweave.graph.basic import Variable
from opweave.tensor import math as tm
from opweave.tensor._typing import tensor_var
from opweave.tensor.basic import _const_int
from opweave.tensor.extra_ops import broadcast_to
from opweave.tensor.random import basic
from opweave.tensor.random.op import (
    compute_batch_shape,
    explicit_expand_dims,
    normalize_size_param,
)
from opweave.tensor.random.var import RandomGeneratorSharedVariable, randomgen_constructor

__all__ = [
    "RandomStream",
    "broadcast_params",
    "compute_batch_shape",
    "custom_rng_deepcopy",
    "explicit_expand_dims",
    "normalize_size_param",
    "params_broadcast_shapes",
    "supp_shape_from_ref_param_shape",
]

#: The distributions a :class:`RandomStream` offers as methods.
_DISTRIBUTIONS = frozenset(name for name in basic.__all__ if name[0].islower())


def _max_dim(a: Any, b: Any, symbolic: bool) -> Any:
    """The broadcast of two dimension lengths (1 gives way to the other)."""
    if _dim_value(a) == 1:
        return b
    if _dim_value(b) == 1:
        return a
    return tm.maximum(a, b) if symbolic else max(a, b)


def _dim_value(d: Any) -> int | None:
    if isinstance(d, Variable):
        return _const_int(d)
    return int(d)


def params_broadcast_shapes(
    param_shapes: Sequence[Sequence[Any]],
    ndims_params: Sequence[int],
    use_pytensor: bool = True,
) -> list[tuple[Any, ...]]:
    """The shapes of parameters broadcast over their batch (leading) dimensions.

    Parameters
    ----------
    param_shapes
        The shape of each parameter (ints or symbolic lengths).
    ndims_params
        The core rank of each parameter.
    use_pytensor
        Combine lengths symbolically (``maximum``); else as Python ints.

    Returns
    -------
    list of tuple
        Each parameter's shape with the common batch shape in front of its core shape.
    """
    rev_batch: list[Any] = []
    for nd, shape in zip(ndims_params, param_shapes, strict=True):
        shape = tuple(shape)
        batch = shape[: len(shape) - nd]
        rev_batch = [
            _max_dim(a, b, use_pytensor)
            for a, b in zip_longest(reversed(batch), rev_batch, fillvalue=1)
        ]
    batch_shape = tuple(reversed(rev_batch))
    return [
        batch_shape + (tuple(shape)[len(tuple(shape)) - nd :] if nd else ())
        for nd, shape in zip(ndims_params, param_shapes, strict=True)
    ]


def broadcast_params(params: Sequence[Any], ndims_params: Sequence[int]) -> list[Any]:
    """Broadcast parameters against each other over their batch dimensions.

    Parameters
    ----------
    params
        NumPy arrays, or tensor variables (then the result is symbolic).
    ndims_params
        The core rank of each parameter.

    Returns
    -------
    list
        The parameters with a common batch shape, each keeping its core shape.

    Examples
    --------
    >>> mean, cov = broadcast_params([np.zeros(3), np.stack([np.eye(3)] * 2)], [1, 2])
    >>> mean.shape, cov.shape
    ((2, 3), (2, 3, 3))
    """
    symbolic = any(isinstance(p, Variable) for p in params)
    shapes = []
    for p in params:
        bcast = getattr(getattr(p, "type", None), "broadcastable", (False,) * np.ndim(p))
        shape = tensor_var(p).shape if isinstance(p, Variable) else np.shape(p)
        shapes.append(tuple(1 if b else shape[i] for i, b in enumerate(bcast)))
    target = params_broadcast_shapes(shapes, ndims_params, use_pytensor=symbolic)
    if symbolic:
        return [broadcast_to(p, shape) for p, shape in zip(params, target, strict=True)]
    return [np.broadcast_to(p, shape) for p, shape in zip(params, target, strict=True)]


def supp_shape_from_ref_param_shape(
    *,
    ndim_supp: int,
    dist_params: Sequence[Any],
    param_shapes: Sequence[Sequence[Any]] | None = None,
    ref_param_idx: int,
) -> tuple[Any, ...]:
    """The core shape of a draw: the last ``ndim_supp`` dimensions of a reference parameter.

    Raises
    ------
    ValueError
        If ``ndim_supp`` is not positive or the parameter has too few dimensions.
    """
    if ndim_supp <= 0:
        raise ValueError("ndim_supp must be greater than 0")
    if param_shapes is not None:
        ref = tuple(param_shapes[ref_param_idx])
    else:
        param = dist_params[ref_param_idx]
        ref = tuple(param.shape[i] for i in range(param.ndim))
    if len(ref) < ndim_supp:
        raise ValueError(
            f"Reference parameter does not match the expected dimensions; "
            f"{ref} has fewer than {ndim_supp} dimension(s)."
        )
    return ref[len(ref) - ndim_supp :]


def custom_rng_deepcopy(rng: np.random.Generator) -> np.random.Generator:
    """An independent copy of ``rng`` in the same state (faster than ``copy.deepcopy``).

    The copy draws exactly what ``rng`` would, and spawning from it leaves ``rng``'s
    seed sequence alone.
    """
    old = rng.bit_generator
    # A bit generator accepts any ISeedSequence; NumPy's stub says SeedSequence.
    new = type(old)(cast(np.random.SeedSequence, copy.deepcopy(old.seed_seq)))
    new.state = old.state
    return np.random.Generator(new)


class RandomStream:
    """A source of random variables with reproducible, per-call fresh draws.

    Parameters
    ----------
    seed
        Seeds the ``numpy.random.SeedSequence`` from which each variable's generator is
        spawned (``None``: fresh entropy).
    namespace
        A module whose ``__all__`` lists the distributions offered as methods (default:
        those of :mod:`opweave.tensor.random.basic`).
    rng_ctor
        Builds a generator from a spawned ``SeedSequence``.

    Examples
    --------
    >>> srng = RandomStream(42)
    >>> x = srng.normal(0.0, 1.0, size=(3,))
    >>> f = opweave.function([], x)  # doctest: +SKIP
    >>> f() is not f()  # new draws per call  # doctest: +SKIP
    """

    def __init__(
        self,
        seed: int | None = None,
        namespace: ModuleType | None = None,
        rng_ctor: Callable[[Any], np.random.Generator] = np.random.default_rng,
    ) -> None:
        if not callable(rng_ctor):
            raise TypeError(f"RandomStream: rng_ctor must be callable, got {rng_ctor!r}")
        if namespace is None:
            self.namespaces = [(basic, _DISTRIBUTIONS)]
        else:
            names = getattr(namespace, "__all__", None)
            if names is None:
                raise TypeError(
                    f"RandomStream: namespace must be a module with __all__, got {namespace!r}"
                )
            self.namespaces = [(namespace, frozenset(names))]
        self.default_instance_seed = seed
        self.rng_ctor = rng_ctor
        self.gen_seedgen = np.random.SeedSequence(seed)
        #: ``(shared generator, its update)`` for every variable made so far.
        self.state_updates: list[tuple[RandomGeneratorSharedVariable, Variable]] = []

    def __getattr__(self, name: str) -> Any:
        if name != "namespaces":
            for namespace, names in self.namespaces:
                if name in names and hasattr(namespace, name):
                    return functools.partial(self.gen, getattr(namespace, name))
        raise AttributeError(f"RandomStream has no attribute or distribution {name!r}")

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *(n for _, names in self.namespaces for n in names)})

    def updates(self) -> list[tuple[RandomGeneratorSharedVariable, Variable]]:
        """The ``(shared generator, update)`` pairs of the variables made so far."""
        return list(self.state_updates)

    def seed(self, seed: int | None = None) -> None:
        """Re-seed every generator made so far, as a new stream with ``seed`` would.

        Parameters
        ----------
        seed
            The new seed (``None``: the seed the stream was made with).
        """
        if seed is None:
            seed = self.default_instance_seed
        self.gen_seedgen = np.random.SeedSequence(seed)
        children = self.gen_seedgen.spawn(len(self.state_updates))
        for (shared_rng, _), child in zip(self.state_updates, children, strict=True):
            shared_rng.set_value(self.rng_ctor(child), borrow=True)

    def gen(self, op: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Draws of ``op(*args, **kwargs)`` from a new shared generator of this stream.

        Raises
        ------
        ValueError
            If ``rng`` is given (the stream provides it).
        """
        if "rng" in kwargs:
            raise ValueError("RandomStream: the rng argument cannot be given to its variables")
        want_next = kwargs.pop("return_next_rng", False)
        (child,) = self.gen_seedgen.spawn(1)
        rng = randomgen_constructor(self.rng_ctor(child), borrow=True)
        next_rng, out = op(*args, rng=rng, return_next_rng=True, **kwargs)
        rng.default_update = next_rng
        self.state_updates.append((rng, next_rng))
        return (next_rng, out) if want_next else out
