"""Which linkers a check runs on, and whether a Type or an Op has C code.

The C questions are answered by opweave-c's own lookup (``opweave_c.contract``), imported
only when asked and only when that distribution is installed and usable here.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from opweave.graph.basic import Apply
from opweave.link.lookup import available_linkers, unusable_linkers

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


def c_contract() -> ModuleType | None:
    """``opweave_c.contract`` when opweave-c is installed and its linkers usable, else None."""
    if "c" not in usable_linkers():
        return None
    try:
        import opweave_c.contract as contract
    except ImportError:
        return None
    return contract


def c_of_type(type_: Any) -> Any | None:
    """The object giving ``type_``'s C interface, or ``None`` (no C, or no opweave-c)."""
    contract = c_contract()
    if contract is None:
        return None
    try:
        return contract.c_type_of(type_)
    except NotImplementedError:
        return None


def c_of_op(node: Apply) -> Any | None:
    """The object giving the C code of ``node``'s Op, or ``None`` (no C, or no opweave-c)."""
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
