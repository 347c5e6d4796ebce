"""PyTensor's ``pytensor.link.jax`` paths, served as ``opweave.link.jax`` (the
``opweave_modules`` hook).

``import opweave.link.jax`` (and, under the pytensor alias, ``import pytensor.link.jax``)
gives :mod:`opweave_jax.pytensor_link_jax`; its submodules (``dispatch`` ...) follow.
``opweave.tensor.rewriting.jax`` gives :mod:`opweave_jax.rewrites`. Importing this module
imports no JAX.
"""

from __future__ import annotations

from opweave.plugins import hookimpl

__all__ = ["opweave_modules"]


@hookimpl
def opweave_modules() -> dict[str, str]:
    """PyTensor's ``pytensor.link.jax`` paths, as ``opweave.link.jax``, and its JAX
    rewrites' module, as ``opweave.tensor.rewriting.jax``."""
    return {
        "opweave.link.jax": "opweave_jax.pytensor_link_jax",
        "opweave.tensor.rewriting.jax": "opweave_jax.rewrites",
    }
