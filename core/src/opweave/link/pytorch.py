"""PyTensor's PyTorch backend (``pytensor.link.pytorch``): opweave does not ship one.

Importing this module, or any module under it, raises a :class:`ModuleNotFoundError` that
says which opweave backends to use instead.
"""

from opweave.link._absent import FOREIGN_BACKEND_ADVICE, absent_module

raise absent_module(
    __name__, "PyTensor's PyTorch backend, which opweave does not ship", FOREIGN_BACKEND_ADVICE
)
