"""Random streams (``pytensor.tensor.random.utils``).

A :class:`RandomStream` makes random variables that each own a shared generator whose
``default_update`` is the advanced generator: every call of a compiled function then
draws anew, and one seed reproduces the whole sequence of draws.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from opweave.graph.basic import Variable
from opweave.tensor.random import basic
from opweave.tensor.random.var import RandomGeneratorSharedVariable, randomgen_constructor

__all__ = ["RandomStream"]

#: The distributions a :class:`RandomStream` offers as methods.
_DISTRIBUTIONS = frozenset(name for name in basic.__all__ if name[0].islower())


class RandomStream:
    """A source of random variables with reproducible, per-call fresh draws.

    Parameters
    ----------
    seed
        Seeds the ``numpy.random.SeedSequence`` from which each variable's generator is
        spawned (``None``: fresh entropy).
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
        rng_ctor: Callable[[Any], np.random.Generator] = np.random.default_rng,
    ) -> None:
        if not callable(rng_ctor):
            raise TypeError(f"RandomStream: rng_ctor must be callable, got {rng_ctor!r}")
        self.default_instance_seed = seed
        self.rng_ctor = rng_ctor
        self.gen_seedgen = np.random.SeedSequence(seed)
        #: ``(shared generator, its update)`` for every variable made so far.
        self.state_updates: list[tuple[RandomGeneratorSharedVariable, Variable]] = []

    def __getattr__(self, name: str) -> Any:
        if name in _DISTRIBUTIONS:
            return functools.partial(self.gen, getattr(basic, name))
        raise AttributeError(f"RandomStream has no attribute or distribution {name!r}")

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *_DISTRIBUTIONS})

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
