"""The standard opweave configuration flags.

:func:`build_config` creates the :class:`~opweave.configuration.Config` that
``opweave.config`` holds: it registers the flags below, then applies the user config file,
the nearest ``pyproject.toml``'s ``[tool.opweave]`` table and ``OPWEAVE_FLAGS``
(see :mod:`opweave.configuration`).
"""

from __future__ import annotations

import os
import platform
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from opweave.configuration import (
    BoolParam,
    Config,
    ConfigParam,
    EnumParam,
    IntParam,
    PathParam,
    StrParam,
)

__all__ = [
    "ThreadsParam",
    "add_thread_options",
    "build_config",
    "config",
    "default_compiledir",
    "platform_tag",
]

#: The modes of the core; plugins add others (``opweave_modes``: opweave-c's ``C``/``CVM``).
MODES = ("FAST_RUN", "FAST_COMPILE", "DebugMode")


class ModeParam(StrParam):
    """``config.mode``'s type: one of :data:`MODES` or the name of a mode a plugin provides.

    The plugins load after the configuration is read, so a name outside :data:`MODES` is
    checked when a function is compiled with it (:func:`opweave.compile.mode.get_mode`
    lists the modes there are); here it must only be a name.
    """

    def __init__(self, default: str) -> None:
        super().__init__(
            default,
            pattern=r"[A-Za-z_][A-Za-z0-9_]*",
            expected=f"{', '.join(MODES)} or the name of a mode an installed plugin "
            "provides (letters, digits and underscores, not starting with a digit)",
        )

    def parse(self, value: Any) -> Any:
        """Return ``value``: a mode name, or a compilation mode object kept as it is.

        PyTensor takes a ``Mode`` for the flag (``config.change_flags(mode=Mode("py"))``);
        an object with ``linker`` and ``optimizer`` attributes is such a mode (this module
        sits below :mod:`opweave.compile`, so the class is not imported here).
        """
        if not isinstance(value, str) and hasattr(value, "linker") and hasattr(value, "optimizer"):
            return value
        return super().parse(value)


FLOAT_DTYPES = ("float64", "float32", "float16")
CAST_POLICIES = ("numpy+floatX", "custom")


def platform_tag() -> str:
    """Return the tag naming the compile directory of this machine and Python.

    Returns
    -------
    str
        ``"<machine>-py<major>.<minor>"``, e.g. ``"x86_64-py3.11"``.
    """
    machine = re.sub(r"[^A-Za-z0-9_.]+", "_", platform.machine()) or "unknown"
    return f"{machine}-py{sys.version_info.major}.{sys.version_info.minor}"


def default_compiledir(environ: Mapping[str, str] | None = None) -> str:
    """Return the default compile directory.

    Parameters
    ----------
    environ
        Environment mapping; default: :data:`os.environ`.

    Returns
    -------
    str
        ``$XDG_CACHE_HOME/opweave/compiledir-<tag>`` if ``XDG_CACHE_HOME`` is set to an
        absolute path, else ``$HOME/.cache/opweave/compiledir-<tag>``, where ``<tag>`` is
        :func:`platform_tag`.
    """
    environ = os.environ if environ is None else environ
    xdg = environ.get("XDG_CACHE_HOME", "")
    if xdg and os.path.isabs(xdg):
        base = Path(xdg)
    else:
        home = environ.get("HOME")
        base = (Path(home) if home else Path.home()) / ".cache"
    return str(base / "opweave" / f"compiledir-{platform_tag()}")


# -- Threads: how many threads BLAS calls and OpenMP loops use (opweave.link.threads applies
# the rule, docs/threads.md states it).


class ThreadsParam(IntParam):
    """A number of threads: a positive integer, or ``"auto"`` (also ``0``: stored as 0),
    the choice of the rule of :mod:`opweave.link.threads`."""

    expected = "'auto' (or 0) or a positive number of threads"

    def __init__(self) -> None:
        super().__init__(0, minimum=0)
        self.expected = ThreadsParam.expected

    def parse(self, value: object) -> int:
        """Convert ``value``: ``"auto"`` to 0, an integer or a string of one as it is."""
        if isinstance(value, str) and value.strip().lower() == "auto":
            return 0
        return super().parse(value)


def _optional_bool(value: Any) -> bool | None:
    """``None`` (also the string ``"None"``, any case) or a boolean flag's value."""
    if value is None or (isinstance(value, str) and value.strip().lower() == "none"):
        return None
    return bool(BoolParam(False).parse(value))


def add_thread_options(config: Config) -> None:
    """Register ``blas__threads`` and ``openmp__threads`` on ``config``."""
    config.add(
        "blas__threads",
        "Threads of the BLAS libraries (NumPy's and SciPy's OpenBLAS, MKL, BLIS) that\n"
        "compiled functions call; set process-wide, through threadpoolctl, when a function\n"
        "is linked. 'auto' (or 0): the CPUs this process may use (its affinity and cgroup\n"
        "quota), never more than the library had (OPENBLAS_NUM_THREADS, MKL_NUM_THREADS,\n"
        "OMP_NUM_THREADS and threadpoolctl limits are kept); in the dask linker's tasks,\n"
        "those CPUs shared among Dask's worker threads (1 with its default pool). A number:\n"
        "that many threads. See docs/threads.md.",
        ThreadsParam(),
    )
    config.add(
        "blas__follow_load",
        "With blas__threads 'auto': the threads of the OpenBLAS libraries follow the\n"
        "machine's load between products (fewer while other processes want the CPUs, the\n"
        "'auto' number again when they are gone), which keeps dense products fast on a busy\n"
        "machine. Off by default: OpenBLAS's last bits depend on its threads, so large\n"
        "products (and what follows them) may then differ from run to run. See\n"
        "docs/threads.md.",
        BoolParam(False),
    )
    config.add(
        "openmp__threads",
        "Threads of each OpenMP loop of the C backend (with ``openmp``), fixed when the\n"
        "loop is compiled. 'auto' (or 0): the calling thread's OpenMP limit\n"
        "(OMP_NUM_THREADS, or threadpoolctl's), at most the CPUs this process may use; in\n"
        "the dask linker's tasks, shared as for ``blas__threads``. A number: that many\n"
        "threads.",
        ThreadsParam(),
    )


def build_config(
    *,
    cwd: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
    user_config_path: str | os.PathLike[str] | None = None,
    load: bool = True,
    options: Sequence[Callable[[Config], None]] = (),
    late_flags: Callable[[], None] | None = None,
) -> Config:
    """Create a config with the standard flags, then apply the outside sources.

    Parameters
    ----------
    cwd
        Directory to start the ``pyproject.toml`` search from; default: the working
        directory.
    environ
        Environment mapping used for the defaults (``CC``, ``XDG_CACHE_HOME``, ``HOME``),
        the user file location and ``OPWEAVE_FLAGS``; default: :data:`os.environ`.
    user_config_path
        Path of the user config file; default:
        :func:`~opweave.configuration.default_user_config_path` of ``environ``.
    load
        If false, only register the flags (every value is its default).
    options
        Functions adding more flags before the sources are read (what backends do in
        their ``opweave_addoption`` hook).
    late_flags
        For the process-wide config: called when an unknown flag is first read, to load
        the plugins; with it, sources may name flags that plugins register later
        (:meth:`~opweave.configuration.Config.defer_unknown_flags`).

    Returns
    -------
    Config
        The new configuration.

    Raises
    ------
    UnknownFlagError, ValueError
        For unknown flags or bad values in a config file or ``OPWEAVE_FLAGS``.
    """
    environ = os.environ if environ is None else environ
    config = Config()
    config.add(
        "linker",
        "Name of the linker that runs compiled functions.\n\n"
        "``auto`` picks the fastest installed linker. Backends and plugins add linkers, so "
        "the name is only checked against the installed ones when a function is compiled. "
        "PyTensor's names are understood too: ``c|py`` (``cvm``) and ``<linker>_nogc`` (the "
        "linker with ``allow_gc`` off).",
        StrParam(
            "auto",
            pattern=r"[A-Za-z_][A-Za-z0-9_]*(\|[A-Za-z_][A-Za-z0-9_]*)?",
            expected="a linker name such as 'auto', 'py', 'c' or 'c|py' "
            "(letters, digits and underscores, not starting with a digit)",
        ),
    )
    config.add(
        "mode",
        "Default compilation mode.\n\n"
        "``FAST_RUN`` applies all optimizing rewrites, ``FAST_COMPILE`` only the cheap ones, "
        "and ``DebugMode`` checks every rewrite and op implementation (slow). Installed "
        "plugins add modes (the C backend: ``C``, ``CVM``); a name no installed plugin provides "
        "(PyTensor's ``NUMBA``, ``JAX`` ...) raises an error saying how to get it when a "
        "function is compiled with it.",
        ModeParam("FAST_RUN"),
    )
    config.add(
        "device",
        "Device that shared variables and computations are placed on.\n\n"
        "``cpu``, ``cuda`` (the default GPU) or ``cuda<N>`` (GPU number ``N``).",
        StrParam("cpu", pattern=r"cpu|cuda[0-9]*", expected="cpu, cuda or cuda<N>"),
    )
    config.add(
        "floatX",
        "Default floating-point dtype of variables built without an explicit dtype.",
        EnumParam("float64", FLOAT_DTYPES),
    )
    config.add(
        "compiledir",
        "Directory where compiled modules are cached.\n\n"
        "A leading ``~`` is expanded. The default, under ``$XDG_CACHE_HOME`` or "
        "``~/.cache``, is specific to the machine architecture and Python version.",
        PathParam(default_compiledir(environ)),
    )
    config.add(
        "cache_rewrites",
        "Whether ``function`` keeps each rewritten graph under ``compiledir`` and reuses it.\n\n"
        "The key is the graph as given (its Ops, Types, constants, names and creation "
        "traces), the inputs' and outputs' options, the mode, every flag, the installed "
        "plugins and the files of the code involved; a later compile of the same graph, in "
        "any process, then skips rewriting. Turn it off to rewrite every time.",
        BoolParam(True),
    )
    config.add(
        "check_input",
        "Whether compiled functions check the type and shape of their inputs.\n\n"
        "Turning it off saves time per call but lets bad inputs reach the op implementations.",
        BoolParam(True),
    )
    config.add(
        "profile",
        "Whether every compiled function is profiled (as ``function(..., profile=True)``):\n"
        "its calls are counted and timed, per node where the linker runs one thunk per "
        "node; see ``opweave.compile.profiling.ProfileStats``. When it is on at exit, the\n"
        "profiles of the process are printed to ``profiling__destination``.",
        BoolParam(False),
    )
    config.add(
        "profiling__destination",
        "Where the profiles are printed at exit when ``profile`` is on: ``stderr``, "
        "``stdout``,\nor the path of a file (appended to).",
        StrParam("stderr"),
    )
    config.add(
        "profiling__n_apply",
        "How many nodes each profile printed at exit lists, slowest first.",
        IntParam(20, minimum=0),
    )
    config.add(
        "profiling__n_ops",
        "How many Op classes each profile printed at exit lists, slowest first.",
        IntParam(20, minimum=0),
    )
    config.add(
        "allow_gc",
        "Whether linkers free intermediate results as soon as they are no longer needed.\n\n"
        "Saves memory; turning it off keeps the storage between calls, which can be faster.",
        BoolParam(True),
    )
    config.add(
        "optimizer_including",
        "Extra rewrite tags to include, separated by colons (``tag1:tag2``).",
        StrParam(""),
    )
    config.add(
        "optimizer_verbose",
        "Whether ``FunctionGraph.replace`` prints each replacement a rewrite makes (its "
        "reason, the old and the new variable) on stdout.",
        BoolParam(False),
    )
    config.add(
        "optimizer_verbose_ignore",
        "Rewrite reasons, separated by commas, whose replacements ``optimizer_verbose`` "
        "does not print.",
        StrParam(""),
    )
    config.add(
        "on_opt_error",
        "What happens when a rewrite raises an error while a function is compiled "
        "(PyTensor's flag). opweave raises it, naming the rewrite, so ``raise`` is the only "
        "value; PyTensor's ``warn``, ``ignore`` and ``pdb`` are refused.",
        EnumParam("raise", ("raise",)),
    )
    config.add(
        "exception_verbosity",
        "How much a compiled function's error says about the node that failed "
        "(PyTensor's flag, with its values). Every value names the node, its inputs' "
        "shapes and dtypes, and where its output was created, in notes of the exception; "
        "``high`` adds a note with the node's graph, four levels of owners deep.",
        EnumParam("low", ("low", "medium", "high")),
    )
    config.add(
        "warn_float64",
        "What happens when a float64 tensor variable is created (PyTensor's flag, with its "
        "values): ``ignore``, ``warn`` (a ``UserWarning``), ``raise`` (a ``TypeError``) or "
        "``pdb`` (the debugger). Constants are not checked, as in PyTensor.",
        EnumParam("ignore", ("ignore", "warn", "raise", "pdb")),
    )
    config.add(
        "vm__lazy",
        "Whether the thunk loops (the ``vm`` and ``cvm`` linkers) evaluate lazily "
        "(PyTensor's flag): ``None`` runs the lazy loop for graphs with a lazy node (an "
        "``ifelse``) only, ``True`` for every graph (only what the outputs need runs), "
        "``False`` for none (every node runs, both branches of an ``ifelse`` included). "
        "A linker's ``lazy`` argument overrides it.",
        ConfigParam(None, parser=_optional_bool, expected="None, True or False"),
    )
    config.add(
        "DebugMode__patience",
        "How many times ``DebugMode`` rewrites the graph (on copies) to check that the "
        "rewrites give the same graph each time: its ``stability_patience`` when not given "
        "(PyTensor's flag; opweave's default is 2, PyTensor's 10).",
        IntParam(2, minimum=1),
    )
    config.add(
        "tensor__cmp_sloppy",
        "How loose the default tolerances of ``opweave.tensor.math._allclose`` are: ``0`` "
        "NumPy's for float64 (tighter ones for float32 and float16), ``1`` and ``2`` looser.",
        IntParam(0, minimum=0),
    )
    config.add(
        "optimizer_excluding",
        "Rewrite tags to exclude, separated by colons (``tag1:tag2``).",
        StrParam(""),
    )
    config.add(
        "cast_policy",
        "How Python numbers are typed when they become constants, and so the dtype of "
        "operations mixing them with variables (as in PyTensor).\n\n"
        "``custom`` (the default) gives a Python int the smallest of int8/int16/int32/int64 "
        "holding it and a Python float ``floatX`` when that is float32/float16, else the "
        "narrowest of float32/float64 holding it exactly, so ``bvector() + 1`` stays int8 and "
        "``fvector() + 1.5`` float32. ``numpy+floatX`` follows NumPy (ints are int64), but "
        "Python floats are ``floatX`` and, with a narrow ``floatX``, results that NumPy "
        "would make float64 without an explicit float64 input stay ``floatX``.",
        EnumParam("custom", CAST_POLICIES),
    )
    config.add(
        "compile__progress",
        "Whether a compile that takes a while says on stderr what it is doing (rewriting,\n"
        "generating code, compiling k of K modules), after ``compile__progress_delay``.",
        BoolParam(True),
    )
    config.add(
        "compile__tiered",
        "Whether a function whose linker compiles code (C) is usable at once: when that\n"
        "link takes longer than a few milliseconds (a compiler runs), the function answers\n"
        "its first calls with the Python kernels (the ``vm`` linker) while the linker works\n"
        "in the background, and switches to it between two calls. ``Function.wait_compiled``\n"
        "waits for the switch. See docs/tiered-compilation.md.",
        BoolParam(True),
    )
    config.add(
        "compile__progress_delay",
        "Seconds a compile runs silently before its progress is shown.",
        IntParam(2, minimum=0),
    )
    config.add(
        "traceback__limit",
        "Number of stack frames recorded where each variable was created.\n\n"
        "``-1`` records the whole stack, ``0`` none.",
        IntParam(8, minimum=-1),
    )
    config.add(
        "compute_test_value",
        "What :func:`opweave.graph.op.compute_test_value` does when an input of the node "
        "has no test value (``tag.test_value``).\n\n"
        "``off`` (the default): graph building never computes test values. ``ignore``: "
        "skip the node quietly; ``warn``: skip it with a warning; ``raise``: raise "
        "ValueError; ``pdb``: enter the debugger. PyTensor's flag, with its values.",
        EnumParam("off", ("off", "ignore", "warn", "raise", "pdb")),
    )
    add_thread_options(config)
    for add_options in options:
        add_options(config)
    if late_flags is not None:
        config.defer_unknown_flags(late_flags)
    if load:
        config.load(cwd=cwd, environ=environ, user_config_path=user_config_path)
    return config


def _no_plugins_yet() -> None:
    """What reading an unknown flag does before :mod:`opweave.plugins.manager` is imported:
    nothing (no plugin can have registered a flag yet, and the flag is reported unknown).

    Importing the plugin manager, which ``import opweave`` does, replaces it with the
    loading of the plugins (:meth:`~opweave.configuration.Config.defer_unknown_flags`): the
    plugin layer sits above the configuration.
    """


#: The process-wide configuration (``opweave.config`` is this object). Its sources may name
#: flags that plugins register later: they are kept until the plugins load.
config = build_config(late_flags=_no_plugins_yet)
