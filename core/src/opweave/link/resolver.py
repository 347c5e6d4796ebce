"""Which implementation runs a node on a backend: the core's one resolver.

:func:`implementation_for` answers for one node and one backend (``"py"``, ``"c"``,
``"cuda"`` or any name a backend defines), asking in this order:

1. **the Op's own method** for that backend: the ``own_method`` of the backend's
   :class:`~opweave.link.implementations.ImplementationTable` (``perform`` for ``py``,
   ``c_code`` for ``c``), defined by the Op's class (or set on the Op itself);
2. **the plugins**, through the one ``opweave_implementation(op, node, backend)`` hook
   (a first-result hook: one call);
3. **the backend's table** (published as ``"implementations"`` in its
   ``opweave_backend_info`` answer), through the Op's MRO. An entry that declares a
   fallback (``opweave_capability = "fallback"``), a placeholder that only returns
   ``None``, or an entry that produces nothing for this node means "run it on another
   backend": the one the backend names as ``"falls_back_to"`` in its answer.

The answer is a :class:`Resolution`: a ``"kernel"`` (with the implementation and where it
came from), a ``"fallback"`` (with the backend it falls back to) or ``"none"``.
:func:`class_capability` is the same order for an Op class rather than a node (steps 1
and 3: plugins answer per node), which the capability matrix
(:mod:`opweave.link.capabilities`) reports.

What the backends publish (their tables and thunk builders) is read once per state of
the plugin manager (the plugins registered), not once per node.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import metadata
from typing import Any, Literal

from opweave.graph.basic import Apply
from opweave.graph.utils import NoImplementationError
from opweave.link.implementations import (
    FALLBACK,
    IMPLEMENTED,
    MISSING,
    entry_capability,
    own_method_defined,
)
from opweave.link.lookup import linker_distributions
from opweave.plugins.manager import OpweavePluginManager, get_plugin_manager

__all__ = [
    "BackendOffer",
    "NoImplementationError",
    "Resolution",
    "backend_offers",
    "class_capability",
    "implementation_for",
    "refusal",
    "resolve",
    "thunk_builder",
]

#: The hook every plugin answers implementations through.
HOOK = "opweave_implementation"
#: The Op method that is the ``py`` implementation when no table names another.
PERFORM = "perform"

Outcome = Literal["kernel", "fallback", "none"]
Origin = Literal["method", "plugin", "table"]


@dataclass(frozen=True)
class Resolution:
    """What runs one node on one backend.

    Attributes
    ----------
    backend
        The backend asked (``"py"``, ``"c"`` ...).
    what
        ``"kernel"``: ``implementation`` runs the node; ``"fallback"``: the backend runs
        such nodes on ``falls_back_to``; ``"none"``: nothing implements it.
    implementation
        The implementation (a ``perform``-style callable for ``py``; what the backend
        documents otherwise), or ``None``.
    origin
        Where it came from: ``"method"`` (the Op's own), ``"plugin"`` (the hook) or
        ``"table"`` (the backend's table); ``None`` for ``"none"``.
    source
        The method's name, the plugin's name or the table's backend distribution.
    falls_back_to
        For ``"fallback"``: the backend that runs the node instead (``None`` when the
        backend does not say).
    asked
        What was asked, in order (for messages).
    """

    backend: str
    what: Outcome
    implementation: Any = None
    origin: Origin | None = None
    source: str | None = None
    falls_back_to: str | None = None
    asked: tuple[str, ...] = ()


@dataclass(frozen=True)
class BackendOffer:
    """What one ``opweave_backend_info`` answer offers for one backend name.

    Attributes
    ----------
    distribution
        The answer's ``"name"`` (``"opweave-c"``).
    plugin
        The name of the plugin that gave the answer.
    table
        Its ``"implementations"`` table, or ``None``.
    make_thunk
        Its ``"make_thunk"``: ``fn(node, implementation, storage_map, compute_map,
        no_recycling) -> thunk``, for a backend that builds thunks from its own
        implementations (``None``: the core's ``perform`` thunks).
    falls_back_to
        Its ``"falls_back_to"``: the backend that runs the nodes its table defers.
    implementation_of
        Its ``"implementation_of"``: ``fn(entry, op, node) -> implementation or None``,
        how a table entry becomes a node's implementation (``None``: the entry is it).
    """

    distribution: str
    plugin: str
    table: Any
    make_thunk: Callable[..., Any] | None
    falls_back_to: str | None
    implementation_of: Callable[[Any, Any, Apply], Any] | None


class _Catalogue:
    """The backends' offers by backend name, for one state of a plugin manager."""

    def __init__(self, key: tuple[Any, ...], offers: Mapping[str, tuple[BackendOffer, ...]]):
        self.key = key
        self.offers = offers
        self.capabilities: dict[Any, str] = {}
        self.own: dict[tuple[type, str], bool] = {}

    def defines_own(self, cls: type, method: str) -> bool:
        """:func:`~opweave.link.implementations.own_method_defined`, remembered."""
        try:
            return self.own[cls, method]
        except KeyError:
            found = self.own[cls, method] = own_method_defined(cls, method)
            return found


#: The plugin manager attribute holding its :class:`_Catalogue`.
_CATALOGUE = "_opweave_backend_catalogue"


def _read_offers(pm: OpweavePluginManager) -> dict[str, tuple[BackendOffer, ...]]:
    found: dict[str, list[BackendOffer]] = {}
    for plugin, info in pm.answers("opweave_backend_info"):
        table = info.get("implementations")
        backend = getattr(table, "backend", None)
        if backend is not None:
            found.setdefault(str(backend), []).append(
                BackendOffer(
                    distribution=str(info["name"]),
                    plugin=plugin,
                    table=table,
                    make_thunk=info.get("make_thunk"),
                    falls_back_to=info.get("falls_back_to"),
                    implementation_of=info.get("implementation_of"),
                )
            )
    return {name: tuple(offers) for name, offers in found.items()}


def _catalogue(pm: OpweavePluginManager) -> _Catalogue:
    key = tuple(pm.hook.opweave_backend_info.get_hookimpls())
    catalogue: _Catalogue | None = getattr(pm, _CATALOGUE, None)
    if catalogue is None or catalogue.key != key:
        catalogue = _Catalogue(key, _read_offers(pm))
        setattr(pm, _CATALOGUE, catalogue)
    return catalogue


def backend_offers(
    backend: str, pm: OpweavePluginManager | None = None
) -> tuple[BackendOffer, ...]:
    """What the installed backends offer for ``backend`` (in hook order)."""
    return _catalogue(pm or get_plugin_manager()).offers.get(backend, ())


def _own_method(backend: str, offers: tuple[BackendOffer, ...]) -> str | None:
    for offer in offers:
        method = getattr(offer.table, "own_method", None)
        if method is not None:
            return str(method)
    return PERFORM if backend == "py" else None


def class_capability(table: Any, cls: type) -> str:
    """What runs ops of ``cls`` on ``table``'s backend, as :func:`implementation_for`
    decides for their nodes, less the plugins (which answer per node).

    Returns
    -------
    str
        ``"implemented"`` (the class's own method, or an entry that produces an
        implementation), ``"partial"`` or ``"fallback"`` (as the entry declares:
        :func:`~opweave.link.implementations.entry_capability`), ``"missing"`` (no
        entry).
    """
    method = getattr(table, "own_method", None)
    if method is not None and own_method_defined(cls, method):
        return IMPLEMENTED
    entry = table.lookup(cls)
    return MISSING if entry is None else entry_capability(entry)


def _entry_capability(catalogue: _Catalogue, entry: Any) -> str:
    try:
        return catalogue.capabilities[entry]
    except KeyError:
        found = catalogue.capabilities[entry] = entry_capability(entry)
        return found
    except TypeError:  # an unhashable entry
        return entry_capability(entry)


def resolve(
    op: Any, node: Apply, backend: str, pm: OpweavePluginManager | None = None
) -> Resolution:
    """:func:`implementation_for` with the Op given (``node.op`` unless a caller asks for
    another Op's implementation of the same node)."""
    pm = pm or get_plugin_manager()
    catalogue = _catalogue(pm)
    offers = catalogue.offers.get(backend, ())
    method = _own_method(backend, offers)
    if method is not None and (
        catalogue.defines_own(type(op), method) or method in getattr(op, "__dict__", ())
    ):
        return Resolution(backend, "kernel", getattr(op, method), "method", method)
    answered = pm.first_answer(HOOK, op=op, node=node, backend=backend)
    if answered is not None:
        plugin, answer = answered
        return Resolution(backend, "kernel", answer, "plugin", plugin)
    plugins = [
        impl.plugin_name for impl in reversed(pm.hook.opweave_implementation.get_hookimpls())
    ]
    asked = ((f"the Op's own {method}",) if method else ()) + (
        f"the plugins ({', '.join(plugins) or 'none'})",
    )
    for offer in offers:
        if offer.table is None:
            continue
        asked += (f"{offer.distribution}'s table",)
        entry = offer.table.lookup(op)
        if entry is None:
            continue
        if _entry_capability(catalogue, entry) != FALLBACK:
            make = offer.implementation_of
            found = entry if make is None else make(entry, op, node)
            if found is not None:
                return Resolution(backend, "kernel", found, "table", offer.distribution)
        return Resolution(
            backend, "fallback", None, "table", offer.distribution, offer.falls_back_to, asked
        )
    return Resolution(backend, "none", asked=asked)


def implementation_for(
    node: Apply, backend: str, pm: OpweavePluginManager | None = None
) -> Resolution:
    """What runs ``node`` on ``backend``: see the module's documentation for the order.

    Parameters
    ----------
    node
        The node.
    backend
        The implementation name (``"py"``, ``"c"``, ``"cuda"`` ...).
    pm
        The plugin manager to ask (default: the process's).
    """
    return resolve(node.op, node, backend, pm)


def thunk_builder(
    resolution: Resolution, pm: OpweavePluginManager | None = None
) -> Callable[..., Any] | None:
    """The ``make_thunk`` declared by the backend offer a kernel came from, or ``None``
    when the core builds the thunk (a ``perform``-style implementation).

    A table's kernel is built by the offer of that table; the Op's own method's and a
    plugin's (unless the plugin published an offer for the backend itself) by the
    backend's own offer: the one whose table names the backend's own method, else the
    first.
    """
    offers = [offer for offer in backend_offers(resolution.backend, pm)]
    if resolution.origin in ("table", "plugin"):
        for offer in offers:
            if resolution.source in (offer.distribution, offer.plugin):
                return offer.make_thunk
    own = [offer for offer in offers if getattr(offer.table, "own_method", None) is not None]
    for offer in own or offers:
        return offer.make_thunk
    return None


def refusal(resolution: Resolution, op: Any, node: Apply) -> NoImplementationError:
    """The error saying why ``resolution`` (not a kernel) gives ``node`` no thunk."""
    if resolution.what == "fallback":
        where = f" on {resolution.falls_back_to!r}" if resolution.falls_back_to else ""
        return NoImplementationError(
            f"{resolution.source} runs {op} (node {node}) not on {resolution.backend!r} but "
            f"falls back to another implementation{where}"
        )
    if getattr(op, "lowered_before_linking", False):
        return NoImplementationError(
            f"{op} (node {node}) is an xtensor Op, which no backend implements: the "
            "compilation's `lower_xtensor` phase replaces it with tensor Ops, and none of "
            "its lowerings (the `LOWERINGS` of opweave.xtensor.rewriting's modules) "
            "rewrote this node. Check that the mode does not exclude `lower_xtensor`, "
            "or give the Op's module a lowering."
        )
    return NoImplementationError(
        f"no installed backend implements {op} (node {node}) for backend "
        f"{resolution.backend!r}; asked: {', '.join(resolution.asked)}. "
        f"{_install_hint(resolution.backend)}"
    )


def _install_hint(backend: str) -> str:
    dist = linker_distributions().get(backend)
    if dist is None:
        return "Install a backend or plugin that provides it."
    try:
        metadata.distribution(dist)
    except metadata.PackageNotFoundError:
        return f"Install a backend that provides it (pip install {dist})."
    return (
        f"{dist} is installed but does not implement it; a plugin can (the "
        "opweave_implementation hook), or compile with another linker."
    )
