"""PyTensor's ``pytensor.link.jax``, served as ``opweave.link.jax`` by opweave-jax.

- :class:`JAXLinker`: the ``jax`` linker (:class:`opweave_jax.linker.JAXLinker`);
- :mod:`~opweave_jax.pytensor_link_jax.dispatch`: ``jax_funcify`` and ``jax_typify``,
  what PyMC's JAX samplers (``pymc.sampling.jax``) use to turn a graph into a function of
  JAX arrays and to override an Op's lowering.

Importing this package imports no JAX (the ``dispatch`` submodule does).
"""

from __future__ import annotations

from opweave_jax.linker import JAXLinker

__all__ = ["JAXLinker"]
