"""Loops over symbolic sequences: PyTensor's ``pytensor.scan``.

:func:`scan` builds a :class:`~opweave.scan.op.Scan` node from a Python function run once
on placeholders; :func:`map`, :func:`reduce`, :func:`foldl` and :func:`foldr` are its
common special cases, and :class:`until` makes a while loop. Gradients flow back through
time (:mod:`opweave.scan.grad`), forward-mode derivatives (``Rop``) through a loop of the
tangents (:mod:`opweave.scan.rop`), and compiled graphs get the loop rewrites of
:mod:`opweave.scan.rewriting` (``scan_push_out_non_seq``, ``scan_merge``,
``scan_save_mem``, ...).

As ``pytensor.scan`` is both the function and its package, this package can be called:
``opweave.scan(fn, ...)`` is ``opweave.scan.scan(fn, ...)``, and ``opweave.scan.until``
and the other names stay reachable.
"""

import sys
import types
from typing import Any

from opweave import configdefaults
from opweave.scan.basic import scan
from opweave.scan.checkpoints import scan_checkpoints
from opweave.scan.info import ScanInfo
from opweave.scan.op import Scan
from opweave.scan.utils import until
from opweave.scan.views import foldl, foldr, map, reduce

__all__ = [
    "Scan",
    "ScanInfo",
    "configdefaults",
    "foldl",
    "foldr",
    "map",
    "reduce",
    "scan",
    "scan_checkpoints",
    "until",
]


class _CallablePackage(types.ModuleType):
    """The package's class: calling it calls :func:`scan`."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return scan(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
