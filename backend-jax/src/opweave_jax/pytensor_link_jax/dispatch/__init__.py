"""PyTensor's ``pytensor.link.jax.dispatch``: :func:`jax_funcify` and :func:`jax_typify`.

See :mod:`opweave_jax.pytensor_link_jax.dispatch.basic`.
"""

from __future__ import annotations

from opweave_jax.pytensor_link_jax.dispatch.basic import jax_funcify, jax_typify

__all__ = ["jax_funcify", "jax_typify"]
