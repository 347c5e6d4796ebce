"""Compilation modes: which rewrites run and which linker executes the result.

Names as PyTensor spells them:

* modes (any case): ``FAST_RUN``, ``FAST_COMPILE``, ``DebugMode`` / ``DEBUG_MODE``,
  ``Mode`` (``config.linker`` with the ``fast_run`` rewrites), ``C``, ``CVM``, and any
  name given to :func:`register_mode`;
* linkers: the installed ones (``py``, ``vm``, ``c``, ``cvm``, ``auto`` ...), PyTensor's
  ``c|py`` (opweave's ``cvm``: C where an Op has it, Python otherwise), and any of them
  followed by ``_nogc`` (``vm_nogc``, ``cvm_nogc``, ``c|py_nogc``: the same linker with
  ``allow_gc=False``);
* optimizers: :data:`predefined_optimizers` (``fast_run``, ``fast_compile``, ``merge``,
  ``None``), queries of the rewrite database :data:`optdb`.

PyTensor's backends that opweave does not ship (Numba, JAX, PyTorch, MLX) are refused
with an error naming what opweave offers instead.
"""

from __future__ import annotations

from typing import Any

from opweave.compile.rewrite_registry import optdb
from opweave.configdefaults import config
from opweave.graph.rewriting.db import RewriteDatabaseQuery
from opweave.link.lookup import (
    LinkerNotFoundError,
    available_linkers,
    resolve_linker,
    unusable_linkers,
)

__all__ = [
    "CVM",
    "FAST_COMPILE",
    "OPT_FAST_COMPILE",
    "OPT_FAST_RUN",
    "OPT_MERGE",
    "OPT_NONE",
    "C",
    "Mode",
    "get_default_mode",
    "get_mode",
    "linker_from_name",
    "optdb",
    "predefined_modes",
    "predefined_optimizers",
    "register_linker",
    "register_mode",
    "register_optimizer",
]

#: Rewrite tags each named optimizer selects.
OPTIMIZER_TAGS: dict[str, tuple[str, ...]] = {
    "fast_run": ("fast_run",),
    "fast_compile": ("fast_compile",),
    "merge": ("merge",),
}

OPT_NONE = RewriteDatabaseQuery(include=())
OPT_MERGE = RewriteDatabaseQuery(include=OPTIMIZER_TAGS["merge"])
OPT_FAST_RUN = RewriteDatabaseQuery(include=OPTIMIZER_TAGS["fast_run"])
OPT_FAST_COMPILE = RewriteDatabaseQuery(include=OPTIMIZER_TAGS["fast_compile"])

#: Optimizer names a :class:`Mode` accepts, and the query of :data:`optdb` each stands for.
predefined_optimizers: dict[str | None, RewriteDatabaseQuery] = {
    None: OPT_NONE,
    "None": OPT_NONE,
    "merge": OPT_MERGE,
    "fast_run": OPT_FAST_RUN,
    "fast_compile": OPT_FAST_COMPILE,
}

#: PyTensor's linker names that opweave provides under another name.
LINKER_ALIASES: dict[str, str] = {"c|py": "cvm"}

#: PyTensor backends opweave does not ship: linker or mode name -> what PyTensor calls it.
FOREIGN_BACKENDS: dict[str, str] = {
    "numba": "Numba",
    "jax": "JAX",
    "pytorch": "PyTorch",
    "mlx": "MLX",
}

_NOGC = "_nogc"

#: Linkers added with :func:`register_linker`.
_registered_linkers: dict[str, Any] = {}


def register_linker(name: str, linker: Any) -> None:
    """Make ``linker`` (a Linker instance or class) usable as ``Mode(linker=name)``.

    Raises
    ------
    ValueError
        If ``name`` is already a registered or installed linker name.
    """
    if not isinstance(name, str):
        raise TypeError(f"register_linker: the name must be a string, got {name!r}")
    if name in _registered_linkers or name in available_linkers():
        raise ValueError(f"linker name {name!r} is already taken")
    _registered_linkers[name] = linker


def register_optimizer(name: str, query: RewriteDatabaseQuery) -> None:
    """Make ``query`` (a query of :data:`optdb`) usable as ``Mode(optimizer=name)``.

    Raises
    ------
    ValueError
        If ``name`` is already an optimizer name.
    """
    if not isinstance(query, RewriteDatabaseQuery):
        raise TypeError(
            f"register_optimizer: expected a RewriteDatabaseQuery, got {type(query).__name__}"
        )
    if name in predefined_optimizers:
        raise ValueError(f"optimizer name {name!r} is already taken")
    predefined_optimizers[name] = query


def _usable_linker_names() -> str:
    unusable = unusable_linkers()
    names = sorted(n for n in available_linkers() if n not in unusable)
    names += sorted(n for n in _registered_linkers if n not in names)
    return ", ".join(names) or "none"


def _foreign_backend_error(name: str, what: str) -> LinkerNotFoundError:
    backend = FOREIGN_BACKENDS[name.lower()]
    return LinkerNotFoundError(
        f"opweave ships no {backend} backend, so {what} {name!r} (a PyTensor name) is not "
        f"available; available linkers: {_usable_linker_names()}. The fastest opweave "
        "equivalent is mode='FAST_RUN' with linker 'cvm' (compiled C, Python where an Op "
        "has no C), the default when opweave-c is installed."
    )


def linker_from_name(name: str, fast_compile: bool = False) -> Any:
    """Return the Linker class (or instance) a linker name stands for.

    Parameters
    ----------
    name
        An installed linker (``"py"``, ``"vm"``, ``"c"``, ``"cvm"``, ``"auto"`` ...), a
        name given to :func:`register_linker`, PyTensor's ``"c|py"``, or one of them
        followed by ``"_nogc"`` (a linker instance with ``allow_gc=False``).
    fast_compile
        For ``"auto"``: rank the linkers by how quickly they compile.

    Raises
    ------
    opweave.link.lookup.LinkerNotFoundError
        For unknown names, and for PyTensor backends opweave does not ship (``numba``,
        ``jax``, ``pytorch``, ``mlx``), naming the available linkers.
    """
    if name in _registered_linkers:
        return _registered_linkers[name]
    installed = available_linkers()
    if name in installed or name == "auto":
        return resolve_linker(name, fast_compile=fast_compile)
    base, nogc = (name[: -len(_NOGC)], True) if name.endswith(_NOGC) else (name, False)
    if base.lower() in FOREIGN_BACKENDS:
        raise _foreign_backend_error(base, "linker")
    base = LINKER_ALIASES.get(base, base)
    if base in _registered_linkers:
        linker = _registered_linkers[base]
    else:
        linker = resolve_linker(base, fast_compile=fast_compile)
    if not nogc:
        return linker
    cls = linker if isinstance(linker, type) else type(linker)
    return cls(allow_gc=False)


class Mode:
    """A linker plus a rewrite query.

    Parameters
    ----------
    linker
        A linker name (``"py"``, ``"vm"``, ``"c"``, ``"cvm"``, ``"auto"``, PyTensor's
        ``"c|py"`` and ``*_nogc`` names, or any name a plugin adds; see
        :func:`linker_from_name`), a Linker instance, or ``None`` for ``config.linker``.
    optimizer
        A name of :data:`predefined_optimizers` (``"fast_run"``, ``"fast_compile"``,
        ``"merge"``, ``None`` or ``"None"`` for no rewrites), ``"default"``
        (``fast_run``), or a :class:`~opweave.graph.rewriting.db.RewriteDatabaseQuery`.
    including, excluding, requiring
        Rewrite tags added to the query.
    """

    def __init__(
        self,
        linker: Any = None,
        optimizer: str | RewriteDatabaseQuery | None = "default",
        including: tuple[str, ...] = (),
        excluding: tuple[str, ...] = (),
        requiring: tuple[str, ...] = (),
    ) -> None:
        if optimizer == "default":
            optimizer = "fast_run"
        if not isinstance(optimizer, RewriteDatabaseQuery) and optimizer not in (
            predefined_optimizers
        ):
            names = ", ".join(sorted(str(k) for k in predefined_optimizers if k is not None))
            raise ValueError(
                f"unknown optimizer {optimizer!r}; expected one of {names}, None or a "
                "RewriteDatabaseQuery"
            )
        self.linker = linker
        self.optimizer = None if optimizer == "None" else optimizer
        self._including = tuple(including)
        self._excluding = tuple(excluding)
        self._requiring = tuple(requiring)

    def _with(self, **changes: tuple[str, ...]) -> Mode:
        new = Mode(self.linker, self.optimizer, self._including, self._excluding, self._requiring)
        for key, tags in changes.items():
            setattr(new, key, getattr(new, key) + tuple(tags))
        return new

    def including(self, *tags: str) -> Mode:
        """Return a copy that also runs the rewrites tagged with any of ``tags``."""
        return self._with(_including=tags)

    def excluding(self, *tags: str) -> Mode:
        """Return a copy that skips the rewrites tagged with any of ``tags``."""
        return self._with(_excluding=tags)

    def requiring(self, *tags: str) -> Mode:
        """Return a copy that only runs rewrites carrying all of ``tags``."""
        return self._with(_requiring=tags)

    def rewrite_query(self) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]] | None:
        """Return ``(include, exclude, require)`` tags, or ``None`` for no rewriting."""
        if self.optimizer is None and not self._including:
            return None
        query = (
            self.optimizer
            if isinstance(self.optimizer, RewriteDatabaseQuery)
            else predefined_optimizers[self.optimizer]
        )
        return (
            tuple(sorted(query.include)) + self._including,
            tuple(sorted(query.exclude)) + self._excluding,
            tuple(sorted(query.require)) + self._requiring,
        )

    def __repr__(self) -> str:
        return (
            f"Mode(linker={self.linker!r}, optimizer={self.optimizer!r}, "
            f"including={self._including}, excluding={self._excluding})"
        )


#: The fixed predefined modes and those added with :func:`register_mode` (``FAST_RUN``,
#: ``Mode`` and ``DebugMode`` depend on the flags and are built by :func:`get_mode` on each
#: call). ``FAST_COMPILE``'s ``"auto"`` linker ranks linkers by ``compile_priority``.
#: ``FAST_RUN`` rewrites, linked by the ``c`` linker (the whole graph in C).
C = Mode(linker="c", optimizer="fast_run")
#: ``FAST_RUN`` rewrites, linked by the ``cvm`` linker (C where an Op has it).
CVM = Mode(linker="cvm", optimizer="fast_run")
#: The cheap rewrites, and the linker quickest to compile.
FAST_COMPILE = Mode(linker="auto", optimizer="fast_compile")

predefined_modes: dict[str, Mode] = {"C": C, "CVM": CVM, "FAST_COMPILE": FAST_COMPILE}

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
        backends opweave does not ship, naming the opweave equivalent.
    """
    if isinstance(mode, Mode):
        return mode
    if mode is None:
        mode = config.mode
    if not isinstance(mode, str):
        raise TypeError(f"mode must be a Mode, a mode name or None, got {mode!r}")
    if mode in predefined_modes:
        return predefined_modes[mode]
    key = mode.upper()
    if key == "FAST_RUN" or key == "MODE":
        return Mode(linker=config.linker, optimizer="fast_run")
    if key in ("DEBUGMODE", "DEBUG_MODE"):
        # late: DebugMode (compile.debug) is built on Mode, defined here
        from opweave.compile.debug.debugmode import DebugMode

        return DebugMode()
    if key in predefined_modes:
        return predefined_modes[key]
    if key.lower() in FOREIGN_BACKENDS:
        raise _foreign_backend_error(mode, "mode")
    if key == "NANGUARDMODE":
        raise ValueError(
            "opweave has no NanGuardMode; mode=DebugMode(check_isfinite=True) (the default "
            "of mode='DebugMode') reports NaN and inf values, naming the node that made them"
        )
    known = ", ".join((*_KNOWN_MODE_NAMES, *predefined_modes))
    raise ValueError(f"unknown mode {mode!r}; expected one of {known} (any case) or a Mode")


def get_default_mode() -> Mode:
    """Return the mode ``config.mode`` names (what ``function`` uses without ``mode=``)."""
    return get_mode(None)
