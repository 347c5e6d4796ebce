"""PyTensor's ``pytensor.link.c.basic``: the C linkers.

opweave's C linkers come from the C backend (the opweave-c distribution), found through the
plugins like any linker: ``CLinker`` here is the installed linker named ``c`` (the whole
graph as one C function) and ``OpWiseCLinker`` the one named ``cvm`` (one C thunk per node,
run in a loop; nodes without C run in Python), as ``Mode(linker="c")`` and
``Mode(linker="cvm")`` would use. Without opweave-c, importing them raises an
:class:`ImportError` that says what to install.
"""

from __future__ import annotations

from opweave.link._absent import absent_name
from opweave.link.lookup import available_linkers, linker_distributions

__all__ = ["CLinker", "OpWiseCLinker"]  # noqa: F822 - resolved by __getattr__

#: PyTensor's linker class names -> opweave's linker names.
_LINKERS = {"CLinker": "c", "OpWiseCLinker": "cvm"}

#: PyTensor names opweave lacks here -> what to use instead.
_ABSENT = {
    "DualLinker": (
        "To compare the Python and the C implementations of every node, compile with "
        "mode='DebugMode' (opweave.compile.DebugMode, check_c_code=True and "
        "check_py_code=True by default)."
    ),
    "get_module_cache": (
        "The C backend's module cache is opweave_c.cache.cache_for_config() (the opweave-c "
        "distribution)."
    ),
}


def __getattr__(name: str) -> object:
    linker = _LINKERS.get(name)
    if linker is None:
        raise absent_name(__name__, name, _ABSENT)
    found = available_linkers().get(linker)
    if found is None:
        dist = linker_distributions().get(linker, "the backend that provides it")
        raise ImportError(
            f"{__name__}.{name} is the linker {linker!r}, which no installed plugin provides: "
            f"pip install {dist}",
            name=__name__,
        )
    return found
