"""Errors raised while generating, building or loading C code."""

from __future__ import annotations


class CompilationError(RuntimeError):
    """The C compiler rejected generated code.

    Attributes
    ----------
    source_path
        Where the failing source was kept.
    what
        The node or block being compiled.
    """

    def __init__(self, message: str, source_path: str | None = None, what: str = "") -> None:
        super().__init__(message)
        self.source_path = source_path
        self.what = what


class CacheDirError(PermissionError):
    """The compile directory is unsafe: another user's, or writable by group or others."""


class ModuleInitError(ImportError):
    """A compiled module was loaded but its initialisation (``c_init_code``, NumPy's C API
    import) failed: rebuilding it would not help, unlike a shared object that cannot be
    loaded at all."""
