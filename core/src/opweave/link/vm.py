"""PyTensor's ``pytensor.link.vm``: the linker that runs a graph's thunks in a loop.

opweave's ``VMLinker`` comes from the Python backend (the opweave-python distribution),
found through the plugins like any linker: it is the installed linker named ``vm``, as
``Mode(linker="vm")`` would use. Without opweave-python, importing it raises an
:class:`ImportError` that says what to install. PyTensor's virtual machines (``VM``,
``Loop``, ``Stack``) have no counterpart: the loop belongs to the linker.
"""

from __future__ import annotations

from opweave.link._absent import absent_name
from opweave.link.lookup import available_linkers, linker_distributions

__all__ = ["VMLinker"]  # noqa: F822 - resolved by __getattr__

#: PyTensor names opweave lacks here -> what to use instead.
_ABSENT = {
    name: (
        "The loop that runs the thunks belongs to the linker: compile with "
        "Mode(linker='vm') (opweave.link.vm.VMLinker) or another installed linker "
        "(`python -m opweave info` lists them)."
    )
    for name in ("VM", "Loop", "Stack", "UpdatingVM", "calculate_reallocate_info")
}


def __getattr__(name: str) -> object:
    if name != "VMLinker":
        raise absent_name(__name__, name, _ABSENT)
    found = available_linkers().get("vm")
    if found is None:
        dist = linker_distributions().get("vm", "the backend that provides it")
        raise ImportError(
            f"{__name__}.VMLinker is the linker 'vm', which no installed plugin provides: "
            f"pip install {dist}",
            name=__name__,
        )
    return found
