"""Where PyTensor's newer releases put :class:`ProfileStats`: the same class as
:mod:`opweave.compile.profiling`, re-exported."""

from opweave.compile.profiling import ProfileStats

__all__ = ["ProfileStats"]
