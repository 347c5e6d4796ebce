"""One table type for every backend's implementations of Ops, and a completeness report.

A backend keeps its implementations in an :class:`ImplementationTable`: Op class ->
entry (a ``perform`` function, a C implementation factory, a GPU kernel factory ...),
found through the Op's MRO so that one entry serves a family of subclasses. The table
also says which Op classes the backend means to cover (its *scope*: by default every Op
class the core defines) and which of those it lacks (:meth:`ImplementationTable.missing`),
for ``python -m opweave info --ops`` and for each backend's completeness test. Backends
publish their table as ``"implementations"`` in their ``opweave_backend_info`` answer.

A table may be given a function that returns its entries instead of the entries: it is
called at the first lookup. A backend whose implementations live in many modules thus
imports them when a compile first needs one of them, not when the plugin loads (which
every process that compiles a function does, whatever backend it uses).
"""

from __future__ import annotations

import dis
from collections.abc import Callable, Iterable, Iterator, Mapping
from types import MappingProxyType
from typing import Any

from opweave.graph.op import Op
from opweave.plugins.forksafe import ForkSafeLock

__all__ = [
    "CAPABILITY_ATTRIBUTE",
    "FALLBACK",
    "IMPLEMENTED",
    "MISSING",
    "PARTIAL",
    "ImplementationTable",
    "core_op_classes",
    "entry_capability",
    "op_classes_of",
    "own_method_defined",
]

IMPLEMENTED, PARTIAL, FALLBACK, MISSING = "implemented", "partial", "fallback", "missing"

#: The attribute through which a table entry declares what it produces.
CAPABILITY_ATTRIBUTE = "opweave_capability"

#: The byte-code instructions of a function that does nothing but return ``None``.
_NOTHING_BUT_NONE = frozenset({"RESUME", "NOP", "CACHE", "RETURN_VALUE"})


def _returns_only_none(entry: Any) -> bool:
    """Whether ``entry`` is a function whose body only returns ``None``."""
    if getattr(entry, "__code__", None) is None:
        return False
    for instruction in dis.get_instructions(entry):
        if instruction.opname in _NOTHING_BUT_NONE:
            continue
        if instruction.opname in ("LOAD_CONST", "RETURN_CONST") and instruction.argval is None:
            continue
        return False
    return True


def entry_capability(entry: Any) -> str:
    """What a table entry produces: ``"implemented"``, ``"partial"`` or ``"fallback"``.

    Raises
    ------
    ValueError
        When the entry declares something else through ``opweave_capability``.
    """
    declared = getattr(entry, CAPABILITY_ATTRIBUTE, None)
    if declared is not None:
        if declared not in (IMPLEMENTED, PARTIAL, FALLBACK):
            raise ValueError(
                f"table entry {entry!r} declares {CAPABILITY_ATTRIBUTE}={declared!r}; "
                f"expected {IMPLEMENTED!r}, {PARTIAL!r} or {FALLBACK!r}"
            )
        return str(declared)
    return FALLBACK if _returns_only_none(entry) else IMPLEMENTED


def _subclasses(cls: type[Any]) -> Iterator[type]:
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


#: The package of the contracts (``Op`` itself, its C interface): not implementations.
_CONTRACT = "opweave.graph"


def op_classes_of(package: str, exclude: tuple[str, ...] = ()) -> list[type]:
    """Every public Op class defined in ``package`` (and its subpackages), by name.

    Only modules already imported are seen; modules starting with ``exclude`` are left out.
    """
    found = {
        cls
        for cls in _subclasses(Op)
        if (cls.__module__ == package or cls.__module__.startswith(package + "."))
        and not (exclude and cls.__module__.startswith(exclude))
        and not cls.__name__.startswith("_")
    }
    return sorted(found, key=lambda cls: (cls.__module__, cls.__qualname__))


def core_op_classes() -> list[type]:
    """Every public Op class of the core's libraries (scalar, tensor, compile, xtensor).

    ``import opweave`` imports them all; the graph contract's own classes are left out,
    and so are the Ops every compilation rewrites away before linking (those whose class
    says ``lowered_before_linking``: the xtensor Ops).
    """
    return [
        cls
        for cls in op_classes_of("opweave", exclude=(_CONTRACT,))
        if not getattr(cls, "lowered_before_linking", False)
    ]


def own_method_defined(cls: type, method: str) -> bool:
    """Whether ``cls`` or a base below the graph contract defines ``method`` itself (the
    contract's own stubs, such as ``Op.perform``, do not count)."""
    bases = (base for base in cls.__mro__ if not base.__module__.startswith(_CONTRACT))
    return any(method in vars(base) for base in bases)


class ImplementationTable(Mapping[type, Any]):
    """A backend's implementations, by Op class, looked up through the Op's MRO.

    Parameters
    ----------
    backend
        The implementation name (``"py"``, ``"c"``, ``"cuda"`` ...).
    entries
        Op class -> entry, or a function without arguments that returns them (called
        once, at the first lookup). Copied; the table is read-only.
    own_method
        The method through which an Op class may carry this backend's implementation
        itself (``"perform"``, ``"c_code"``): such classes count as implemented.
    scope
        Returns the Op classes the backend means to cover (default:
        :func:`core_op_classes`).
    """

    def __init__(
        self,
        backend: str,
        entries: Mapping[type, Any] | Callable[[], Mapping[type, Any]],
        own_method: str | None = None,
        scope: Callable[[], Iterable[type]] = core_op_classes,
    ) -> None:
        self.backend = backend
        self._loaded: MappingProxyType[type, Any] | None = None
        self._load: Callable[[], Mapping[type, Any]] | None = None
        if callable(entries):
            self._load = entries
            # Loading imports the backend's modules: a fork waits for a load under way
            # (a child could not finish another thread's import).
            self._lock = ForkSafeLock(fork_waits=True)
        else:
            self._loaded = MappingProxyType(dict(entries))
        self.own_method = own_method
        self._scope = scope

    @property
    def _entries(self) -> MappingProxyType[type, Any]:
        loaded = self._loaded
        if loaded is None:
            with self._lock:  # one thread imports; the others wait for its answer
                if self._loaded is None:
                    assert self._load is not None
                    self._loaded = MappingProxyType(dict(self._load()))
                loaded = self._loaded
        return loaded

    @property
    def loaded(self) -> bool:
        """Whether the entries are there (always, unless a function gives them and no
        lookup has called it yet)."""
        return self._loaded is not None

    def __getitem__(self, cls: type) -> Any:
        return self._entries[cls]

    def __iter__(self) -> Iterator[type]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def lookup(self, op: Any) -> Any | None:
        """The entry for ``op`` (an Op or an Op class): its class's, or its nearest base's."""
        cls = op if isinstance(op, type) else type(op)
        entries = self._entries
        for base in cls.__mro__:
            entry = entries.get(base)
            if entry is not None:
                return entry
        return None

    def implements(self, cls: type) -> bool:
        """Whether ops of ``cls`` have an implementation here (an entry or their own)."""
        if self.lookup(cls) is not None:
            return True
        return self.own_method is not None and own_method_defined(cls, self.own_method)

    def scope(self) -> list[type]:
        """The Op classes this backend means to cover."""
        return list(self._scope())

    def missing(self) -> list[type]:
        """The Op classes of :meth:`scope` that have no implementation here."""
        return [cls for cls in self.scope() if not self.implements(cls)]

    def __repr__(self) -> str:
        if not self.loaded:
            return f"<ImplementationTable {self.backend!r}: not loaded yet>"
        return f"<ImplementationTable {self.backend!r}: {len(self)} entries>"
