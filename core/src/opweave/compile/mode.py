"""Compilation modes: which rewrites run and which linker executes the result."""

from __future__ import annotations

from typing import Any

from opweave.configdefaults import config

#: Rewrite tags each named optimizer selects.
OPTIMIZER_TAGS: dict[str, tuple[str, ...]] = {
    "fast_run": ("fast_run",),
    "fast_compile": ("fast_compile",),
    "merge": ("merge",),
}

#: The predefined mode names and their (linker, optimizer).
PREDEFINED_MODES: dict[str, tuple[str, str | None]] = {
    "FAST_RUN": ("auto", "fast_run"),
    # "auto" under the fast_compile optimizer ranks linkers by compile_priority.
    "FAST_COMPILE": ("auto", "fast_compile"),
}


class Mode:
    """A linker plus a rewrite query.

    Parameters
    ----------
    linker
        A linker name (``"py"``, ``"vm"``, ``"c"``, ``"cvm"``, ``"auto"``, or any name
        a plugin adds), a Linker instance, or ``None`` for ``config.linker``.
    optimizer
        ``"fast_run"``, ``"fast_compile"``, ``"merge"``, ``None`` (no rewrites), or
        ``"default"`` (``fast_run``).
    """

    def __init__(
        self,
        linker: Any = None,
        optimizer: str | None = "default",
        including: tuple[str, ...] = (),
        excluding: tuple[str, ...] = (),
        requiring: tuple[str, ...] = (),
    ) -> None:
        if optimizer == "default":
            optimizer = "fast_run"
        if optimizer is not None and optimizer != "None" and optimizer not in OPTIMIZER_TAGS:
            raise ValueError(
                f"unknown optimizer {optimizer!r}; expected one of "
                f"{', '.join(sorted(OPTIMIZER_TAGS))} or None"
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
        include = OPTIMIZER_TAGS.get(self.optimizer or "", ()) + self._including
        return include, self._excluding, self._requiring

    def __repr__(self) -> str:
        return (
            f"Mode(linker={self.linker!r}, optimizer={self.optimizer!r}, "
            f"including={self._including}, excluding={self._excluding})"
        )


def get_mode(mode: str | Mode | None) -> Mode:
    """Return a :class:`Mode` from a mode, a mode name, or ``None`` (``config.mode``).

    Raises
    ------
    ValueError
        For an unknown mode name, listing the known ones.
    """
    if isinstance(mode, Mode):
        return mode
    if mode is None:
        mode = config.mode
    if not isinstance(mode, str):
        raise TypeError(f"mode must be a Mode, a mode name or None, got {mode!r}")
    if mode in PREDEFINED_MODES:
        linker, optimizer = PREDEFINED_MODES[mode]
        if mode == "FAST_RUN" and config.linker != "auto":
            linker = config.linker
        return Mode(linker=linker, optimizer=optimizer)
    if mode == "DebugMode":
        # late: DebugMode (compile.debugmode) is built on Mode, defined here
        from opweave.compile.debugmode import DebugMode

        return DebugMode()
    raise ValueError(
        f"unknown mode {mode!r}; expected one of {', '.join(PREDEFINED_MODES)} or a Mode"
    )
