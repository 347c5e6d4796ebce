"""Which linkers a check runs on, and whether a Type or an Op has C code.

The C questions are answered by the backend that compiles C, through the plugins: the
``c_contract`` entry of its ``opweave_backend_info`` answer is an object with
``c_type_of(type_)``, ``c_op_of(node)`` (each raising ``NotImplementedError`` for what has
no C) and ``version_of(impl, node)``. It is asked only when that backend is installed and
usable here.
"""

from __future__ import annotations

from typing import Any

from opweave.graph.basic import Apply
from opweave.link.lookup import available_linkers, unusable_linkers
from opweave.plugins import get_plugin_manager

__all__ = ["CPU_LINKERS", "c_contract", "c_of_op", "c_of_type", "usable_linkers"]

#: The standard CPU linkers, in the order the kit runs them (``py`` is the reference).
CPU_LINKERS: tuple[str, ...] = ("py", "vm", "c", "cvm")

#: Linkers that run on a device rather than the CPU: values live in device memory.
_DEVICE_LINKERS = frozenset({"cuda"})


def usable_linkers(cpu_only: bool = True) -> list[str]:
    """The installed linkers usable on this machine, the standard CPU ones first.

    Parameters
    ----------
    cpu_only
        Leave out the linkers whose values live on a device (``cuda``).
    """
    installed = available_linkers()
    unusable = unusable_linkers()
    names = [n for n in CPU_LINKERS if n in installed]
    names += sorted(n for n in installed if n not in CPU_LINKERS)
    return [n for n in names if n not in unusable and not (cpu_only and n in _DEVICE_LINKERS)]


def c_contract() -> Any | None:
    """The ``c_contract`` an available installed backend declares in its
    ``opweave_backend_info`` answer, or ``None`` (no backend compiling C is usable here)."""
    for info in get_plugin_manager().hook.opweave_backend_info():
        contract = info.get("c_contract") if info.get("available") else None
        if contract is not None:
            return contract
    return None


def c_of_type(type_: Any) -> Any | None:
    """The object giving ``type_``'s C interface, or ``None`` (no C, or no C backend)."""
    contract = c_contract()
    if contract is None:
        return None
    try:
        return contract.c_type_of(type_)
    except NotImplementedError:
        return None


def c_of_op(node: Apply) -> Any | None:
    """The object giving the C code of ``node``'s Op, or ``None`` (no C, or no C backend)."""
    contract = c_contract()
    if contract is None:
        return None
    try:
        return contract.c_op_of(node)
    except NotImplementedError:
        return None


def c_version(impl: Any, node: Apply) -> tuple[Any, ...]:
    """The C cache version of ``impl`` for ``node`` (``()`` when unversioned)."""
    contract = c_contract()
    return () if contract is None else contract.version_of(impl, node)
