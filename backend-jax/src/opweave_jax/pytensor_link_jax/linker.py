"""PyTensor's ``pytensor.link.jax.linker``: the ``jax`` linker."""

from __future__ import annotations

from opweave_jax.linker import JAXLinker

__all__ = ["JAXLinker"]
