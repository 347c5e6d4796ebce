"""PyTensor's ``pytensor.link.jax.dispatch.random``: :data:`numpyro_available`.

PyTensor's JAX backend draws a few distributions (``binomial``, ``betabinom``,
``vonmises``) with NumPyro; code written for it reads :data:`numpyro_available` to know
whether it can. opweave's ``jax`` lowerings of random variables
(:mod:`opweave_jax.lowerings.random`) do not use NumPyro; the flag only says whether it is
installed.
"""

from __future__ import annotations

from importlib.util import find_spec

__all__ = ["numpyro_available"]

#: Whether NumPyro is installed.
numpyro_available: bool = find_spec("numpyro") is not None
