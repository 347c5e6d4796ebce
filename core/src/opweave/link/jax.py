"""PyTensor's JAX backend (``pytensor.link.jax``): opweave does not ship one.

Importing this module, or any module under it, raises a :class:`ModuleNotFoundError` that
says which opweave backends to use instead.
"""

from opweave.link._absent import FOREIGN_BACKEND_ADVICE, absent_module

raise absent_module(
    __name__, "PyTensor's JAX backend, which opweave does not ship", FOREIGN_BACKEND_ADVICE
)
