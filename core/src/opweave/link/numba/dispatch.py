"""PyTensor's Numba conversions (``pytensor.link.numba.dispatch``): opweave has no Numba
backend, so importing this module raises a :class:`ModuleNotFoundError` that says which
backends to use instead."""

from opweave.link._absent import FOREIGN_BACKEND_ADVICE, absent_module

raise absent_module(
    __name__,
    "PyTensor's Numba conversion of Ops, which opweave does not ship",
    FOREIGN_BACKEND_ADVICE,
)
