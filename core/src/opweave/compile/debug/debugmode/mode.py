"""``DebugMode``: a compilation mode that checks Ops, Types and rewrites while it runs."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from opweave.compile.debug.debugmode.checks import resolve_prealloc_modes
from opweave.compile.debug.debugmode.linker import DebugLinker, DebugSettings
from opweave.compile.mode_base import Mode
from opweave.configdefaults import config

__all__ = ["DEFAULT_STABILITY_PATIENCE", "DebugMode"]

#: The default of the flag ``DebugMode__patience``: how many times the rewrites run (on
#: copies of the graph) when ``stability_patience`` is ``None``.
DEFAULT_STABILITY_PATIENCE = 2


class DebugMode(Mode):
    """A slow mode that checks everything it can while computing the right result.

    A function compiled with ``mode=DebugMode()`` (or ``mode="DebugMode"``, or with
    ``config.mode = "DebugMode"``) returns what the normal linkers return, and raises a
    :class:`~opweave.compile.debug.debugmode.errors.DebugModeError` when it finds:

    * two implementations of a node (``debug_perform``, ``py``, ``c``, ... whatever the
      installed backends offer) that disagree: ``BadThunkOutput``;
    * an input changed that the Op does not declare in ``destroy_map``: ``BadDestroyMap``;
    * an output sharing memory with an input or another output that ``view_map`` /
      ``destroy_map`` do not declare: ``BadViewMap``;
    * an output its Type rejects (or, with ``check_isfinite``, a NaN/inf):
      ``InvalidValueError``;
    * an implementation that computes something else when its output storage is
      pre-filled (the storage reuse contract): ``BadThunkOutput`` naming the mode;
    * a rewrite that replaced a variable with one of a different value:
      ``BadOptimization`` naming the rewrite;
    * rewriting that does not always give the same graph: ``StochasticOrder``.

    Parameters
    ----------
    optimizer
        The rewrites to run and check (see :class:`~opweave.compile.mode.Mode`), or a
        graph rewriter (an object with a ``rewrite(fgraph)`` method, such as a rewrite
        database's query) to run and check instead.
    stability_patience
        How many times to run the rewrites, on copies of the graph, to check they give
        the same graph every time; ``None`` for the flag ``DebugMode__patience`` (default
        :data:`DEFAULT_STABILITY_PATIENCE`), 1 to turn the check off.
    check_c_code
        Also run (and compare) the ``"c"`` implementation where a backend offers one.
    check_py_code
        Run (and compare) the ``"py"`` implementation (the Op's ``perform``).
    check_isfinite
        Treat NaN and inf in floating-point outputs as invalid values.
    check_preallocated_output
        The pre-allocation modes to re-run every node with: some of ``"previous"``,
        ``"wrong_size"``, ``"strided"``, ``"c_contiguous"``, ``"f_contiguous"`` (a list,
        or a string joined with ``:``), ``"ALL"``, or ``None`` for ``previous``,
        ``wrong_size`` and ``strided``; ``[]`` turns the check off.
    require_matching_strides
        0: ignore differences in output strides between implementations; 1: warn
        (:class:`~opweave.compile.debug.debugmode.errors.DebugModeWarning`); 2: raise
        ``BadThunkOutput``.
    linker
        ``None`` (the default) or a :class:`~opweave.compile.debug.debugmode.linker.DebugLinker`;
        DebugMode cannot use another linker.
    impls
        More implementation names to ask the backends for (after ``"py"`` and ``"c"``),
        e.g. one a plugin defines.
    including, excluding, requiring
        Rewrite tags, as for :class:`~opweave.compile.mode.Mode`.

    Notes
    -----
    ``FunctionMaker`` does not rewrite the graph of a DebugMode function
    (:meth:`rewrite_query` returns ``None``): the linker does, when it accepts the graph,
    with a feature recording every replacement. Every node runs on copies of its inputs,
    so destructive Ops never change the caller's values in DebugMode.
    """

    def __init__(
        self,
        optimizer: Any = "fast_run",
        stability_patience: int | None = None,
        check_c_code: bool = True,
        check_py_code: bool = True,
        check_isfinite: bool = True,
        check_preallocated_output: str | Iterable[str] | None = None,
        require_matching_strides: int = 0,
        linker: Any = None,
        *,
        impls: Iterable[str] = (),
        including: tuple[str, ...] = (),
        excluding: tuple[str, ...] = (),
        requiring: tuple[str, ...] = (),
    ) -> None:
        #: The graph rewriter given as ``optimizer``, if one was.
        self.custom_rewriter = optimizer if hasattr(optimizer, "rewrite") else None
        super().__init__(
            linker=None,
            optimizer=None if self.custom_rewriter is not None else optimizer,
            including=including,
            excluding=excluding,
            requiring=requiring,
        )
        if stability_patience is None:
            stability_patience = config.DebugMode__patience
        if not isinstance(stability_patience, int) or stability_patience < 1:
            raise ValueError(
                f"stability_patience must be a positive integer or None, got {stability_patience!r}"
            )
        if require_matching_strides not in (0, 1, 2):
            raise ValueError(
                f"require_matching_strides must be 0, 1 or 2, got {require_matching_strides!r}"
            )
        self.stability_patience = stability_patience
        self.check_c_code = bool(check_c_code)
        self.check_py_code = bool(check_py_code)
        self.check_isfinite = bool(check_isfinite)
        self.check_preallocated_output = resolve_prealloc_modes(check_preallocated_output)
        self.require_matching_strides = require_matching_strides
        if isinstance(impls, str):
            impls = (impls,)
        self.extra_impls = tuple(impls)
        self.linker = self._own_linker(linker)

    def _own_linker(self, linker: Any) -> DebugLinker:
        if linker is None or linker == "debug":
            return DebugLinker(mode=self)
        if isinstance(linker, type) and issubclass(linker, DebugLinker):
            return linker(mode=self)
        if isinstance(linker, DebugLinker):
            if linker.mode is None:
                linker.mode = self
            return linker
        raise ValueError(
            f"DebugMode runs its own DebugLinker; got linker={linker!r}. It already runs every "
            "implementation the installed backends offer (see check_c_code, check_py_code "
            "and impls)."
        )

    @property
    def impl_names(self) -> tuple[str, ...]:
        """The implementation names asked of the backends, in order."""
        names = (("py",) if self.check_py_code else ()) + (("c",) if self.check_c_code else ())
        return tuple(dict.fromkeys(names + self.extra_impls))

    def debug_settings(self) -> DebugSettings:
        """Return the checks this mode asks its linker for."""
        return DebugSettings(
            impls=self.impl_names,
            check_isfinite=self.check_isfinite,
            prealloc_modes=self.check_preallocated_output,
            require_matching_strides=self.require_matching_strides,
            stability_patience=self.stability_patience,
        )

    def rewrite_query(self) -> None:
        """Return ``None``: ``FunctionMaker`` must not rewrite; the DebugLinker does."""
        return None

    def debug_rewrite_query(
        self,
    ) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]] | Any | None:
        """Return what the DebugLinker rewrites with: the graph rewriter given as
        ``optimizer``, else the ``(include, exclude, require)`` tags (``None``: no
        rewriting)."""
        if self.custom_rewriter is not None:
            return self.custom_rewriter
        return Mode.rewrite_query(self)

    def _with(self, **changes: tuple[str, ...]) -> DebugMode:
        new = copy.copy(self)
        for key, tags in changes.items():
            setattr(new, key, getattr(new, key) + tuple(tags))
        new.linker = DebugLinker(mode=new)
        return new

    def __repr__(self) -> str:
        return (
            f"DebugMode(optimizer={self.optimizer!r}, impls={self.impl_names!r}, "
            f"check_isfinite={self.check_isfinite}, "
            f"check_preallocated_output={self.check_preallocated_output!r}, "
            f"stability_patience={self.stability_patience}, "
            f"including={self._including}, excluding={self._excluding})"
        )
