"""Compilation modes: which rewrites run and which linker executes the result.

Names as PyTensor spells them:

* modes (any case): ``FAST_RUN``, ``FAST_COMPILE``, ``DebugMode`` / ``DEBUG_MODE``,
  ``Mode`` (``config.linker`` with the ``fast_run`` rewrites), the modes the installed
  plugins provide (``opweave_modes``: the C backend's ``C`` and ``CVM``, importable from
  here as ``from opweave.compile.mode import CVM``), and any name given to
  :func:`register_mode`;
* linkers: the installed ones (``py``, ``vm``, ``c``, ``cvm``, ``auto`` ...), PyTensor's
  ``c|py`` (opweave's ``cvm``: C where an Op has it, Python otherwise), and any of them
  followed by ``_nogc`` (``vm_nogc``, ``cvm_nogc``, ``c|py_nogc``: the same linker with
  ``allow_gc=False``);
* optimizers: :data:`predefined_optimizers` (``fast_run``, ``fast_compile``, ``merge``,
  ``minimum_compile``, ``None``), queries of the rewrite database :data:`optdb`.

PyTensor's backends that opweave does not ship (Numba, JAX, PyTorch, MLX) are refused
with an error naming what opweave offers instead. :data:`JAX` and :data:`NUMBA` exist as
modes (with PyTensor's rewrite queries, ``JAX.optimizer``), so that code reading them
imports; compiling with them raises that error.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any

from opweave.compile.debug.debugmode import DebugMode
from opweave.compile.mode_base import (
    FOREIGN_BACKENDS,
    OPT_FAST_COMPILE,
    OPT_FAST_RUN,
    OPT_FAST_RUN_STABLE,
    OPT_MERGE,
    OPT_MINIMUM,
    OPT_NONE,
    OPT_O2,
    OPT_O3,
    OPT_STABILIZE,
    OPT_UNSAFE,
    AddDestroyHandler,
    AddFeatureOptimizer,
    Mode,
    PrintCurrentFunctionGraph,
    RunnableQuery,
    _foreign_backend_error,
    linker_from_name,
    optdb,
    predefined_linkers,
    predefined_optimizers,
    register_linker,
    register_optimizer,
)
from opweave.compile.mode_base import _registered_linkers as _registered_linkers
from opweave.configdefaults import config
from opweave.plugins.hints import absent_hint
from opweave.plugins.manager import get_plugin_manager

__all__ = [
    "FAST_COMPILE",
    "JAX",
    "NUMBA",
    "OPT_FAST_COMPILE",
    "OPT_FAST_RUN",
    "OPT_FAST_RUN_STABLE",
    "OPT_MERGE",
    "OPT_MINIMUM",
    "OPT_NONE",
    "OPT_O2",
    "OPT_O3",
    "OPT_STABILIZE",
    "OPT_UNSAFE",
    "VM",
    "AddDestroyHandler",
    "AddFeatureOptimizer",
    "Mode",
    "PrintCurrentFunctionGraph",
    "RunnableQuery",
    "fast_run_linkers_to_mode",
    "get_active_mode",
    "get_default_mode",
    "get_mode",
    "linker_from_name",
    "optdb",
    "predefined_linkers",
    "predefined_modes",
    "predefined_optimizers",
    "register_linker",
    "register_mode",
    "register_optimizer",
]


#: The fixed predefined modes and those added with :func:`register_mode` (``FAST_RUN``,
#: ``Mode`` and ``DebugMode`` depend on the flags and are built by :func:`get_mode` on each
#: call). ``FAST_COMPILE``'s ``"auto"`` linker ranks linkers by ``compile_priority``.
#: ``FAST_RUN`` rewrites, linked by the ``vm`` linker (every node in Python).
VM = Mode(linker="vm", optimizer="fast_run")
#: The cheap rewrites, and the linker quickest to compile.
FAST_COMPILE = Mode(linker="auto", optimizer="fast_compile")

#: PyTensor's JAX mode: its query is there to read; compiling with it, where no plugin
#: provides the ``jax`` linker, raises an error saying what to use instead.
JAX = Mode(linker="jax", optimizer=RunnableQuery(include=("fast_run", "jax")))
#: PyTensor's Numba mode: as :data:`JAX`, for Numba.
NUMBA = Mode(linker="numba", optimizer=RunnableQuery(include=("fast_run", "numba")))


@functools.cache
def _mode_of(name: str, kwargs: tuple[tuple[str, Any], ...]) -> Mode:
    """The one :class:`Mode` a plugin's mode ``name`` with these keyword arguments stands
    for (the same object on every call, so that ``get_mode("CVM") is CVM``)."""
    return Mode(**dict(kwargs))


def plugin_modes() -> dict[str, Mode]:
    """The modes the installed plugins provide (``opweave_modes``), by name.

    A mode given as keyword arguments is the same :class:`Mode` object on every call.
    """
    modes: dict[str, Mode] = {}
    for answer in get_plugin_manager().hook.opweave_modes():
        for name, value in answer.items():
            if isinstance(value, Mode):
                modes[name] = value
            else:
                modes[name] = _mode_of(name, tuple(sorted(value.items())))
    return modes


class _ModeTable(MutableMapping[str, Mode]):
    """PyTensor's ``predefined_modes``: the fixed modes, those added with
    :func:`register_mode`, and those the installed plugins provide (read on each access)."""

    def __init__(self, placeholders: dict[str, Mode]) -> None:
        self._placeholders = placeholders
        self._own: dict[str, Mode] = {}

    def _all(self) -> dict[str, Mode]:
        return {**self._placeholders, **plugin_modes(), **self._own}

    def __getitem__(self, name: str) -> Mode:
        return self._all()[name]

    def __setitem__(self, name: str, mode: Mode) -> None:
        self._own[name] = mode

    def __delitem__(self, name: str) -> None:
        if name in self._own:
            del self._own[name]
        else:
            del self._placeholders[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())

    def __repr__(self) -> str:
        return f"predefined_modes({list(self._all())})"


class _FastRunModes(Mapping[str, Mode]):
    """PyTensor's ``fast_run_linkers_to_mode``: linker name -> the mode running the
    ``fast_run`` rewrites with it (``vm``, and the plugins' ``fast_run`` modes)."""

    def _all(self) -> dict[str, Mode]:
        found = {
            mode.linker: mode
            for mode in plugin_modes().values()
            if isinstance(mode.linker, str) and mode.optimizer == "fast_run"
        }
        return {**found, "vm": VM}

    def __getitem__(self, name: str) -> Mode:
        return self._all()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


#: PyTensor's table: linker name -> the mode running the ``fast_run`` rewrites with it.
fast_run_linkers_to_mode: Mapping[str, Mode] = _FastRunModes()

#: The predefined modes: the fixed ones, those added with :func:`register_mode`, and the
#: installed plugins' (``FAST_RUN``, ``Mode`` and ``DebugMode`` depend on the flags and
#: are built by :func:`get_mode` on each call). ``FAST_COMPILE``'s ``"auto"`` linker ranks
#: linkers by ``compile_priority``.
predefined_modes: MutableMapping[str, Mode] = _ModeTable(
    {"FAST_COMPILE": FAST_COMPILE, "JAX": JAX, "NUMBA": NUMBA}
)

_KNOWN_MODE_NAMES = ("FAST_RUN", "DebugMode", "DEBUG_MODE", "Mode")


def register_mode(name: str, mode: Mode) -> None:
    """Make ``mode`` usable as ``function(..., mode=name)`` (and ``config.mode``).

    Raises
    ------
    ValueError
        If ``name`` already names a mode.
    """
    if not isinstance(mode, Mode):
        raise TypeError(f"register_mode: expected a Mode, got {type(mode).__name__}")
    if name in predefined_modes or name.upper() in {n.upper() for n in _KNOWN_MODE_NAMES}:
        raise ValueError(f"mode name {name!r} is already taken")
    predefined_modes[name] = mode


def get_mode(mode: str | Mode | None) -> Mode:
    """Return a :class:`Mode` from a mode, a mode name (any case), or ``None``
    (``config.mode``).

    Raises
    ------
    ValueError
        For an unknown mode name, listing the known ones; for PyTensor's modes of
        backends opweave does not ship (``PYTORCH``, ``MLX``), naming the opweave
        equivalent (``JAX`` and ``NUMBA`` are returned; compiling with them raises that
        error).
    """
    if isinstance(mode, Mode):
        return mode
    from_config = mode is None
    if mode is None:
        mode = config.mode
        if isinstance(mode, Mode):
            return mode
    if not isinstance(mode, str):
        raise TypeError(f"mode must be a Mode, a mode name or None, got {mode!r}")
    if mode in predefined_modes:
        return predefined_modes[mode]
    key = mode.upper()
    if key == "FAST_RUN" or key == "MODE":
        return Mode(linker=config.linker, optimizer="fast_run")
    if key in ("DEBUGMODE", "DEBUG_MODE"):
        return DebugMode()
    if key in predefined_modes:
        return predefined_modes[key]
    if key.lower() in FOREIGN_BACKENDS:
        raise _foreign_backend_error(mode, "mode")
    hint = absent_hint(key)
    if hint is not None:
        raise ValueError(f"mode {mode!r} is not available: {hint}")
    if key == "NANGUARDMODE":
        raise ValueError(
            "opweave has no NanGuardMode; mode=DebugMode(check_isfinite=True) (the default "
            "of mode='DebugMode') reports NaN and inf values, naming the node that made them"
        )
    known = ", ".join((*_KNOWN_MODE_NAMES, *predefined_modes))
    where = f" (config.mode, set from {config.source('mode')})" if from_config else ""
    raise ValueError(f"unknown mode {mode!r}{where}; expected one of {known} (any case) or a Mode")


def get_default_mode() -> Mode:
    """Return the mode ``config.mode`` names (what ``function`` uses without ``mode=``)."""
    return get_mode(None)


def get_active_mode(fgraph: Any) -> Mode:
    """The compilation mode rewriting ``fgraph``: the graph's ``_compile_mode`` when a
    compilation set it, else the mode named by ``config.mode``.

    PyTensor's name in :mod:`opweave.graph.rewriting.basic` (``import opweave`` gives it
    there too).
    """
    active = getattr(fgraph, "_compile_mode", None)
    return get_mode(active if active is not None else config.mode)


def __getattr__(name: str) -> Mode:
    # The modes the installed plugins provide (``from opweave.compile.mode import CVM``);
    # mode names are upper case, and nothing else asks the plugins.
    if not name.isupper() or name.startswith("_"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    found = plugin_modes().get(name)
    if found is not None:
        return found
    hint = absent_hint(name)
    if hint is not None:
        raise ImportError(
            f"cannot import name {name!r} from {__name__!r}: the mode {name} is not available: "
            f"{hint}",
            name=__name__,
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
