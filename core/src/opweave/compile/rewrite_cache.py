"""Rewritten graphs kept under ``config.compiledir``, keyed by the graph as it was given.

Rewriting is most of what a compile costs once the compiled modules are cached. When
``config.cache_rewrites`` is on, :class:`~opweave.compile.maker.FunctionMaker` asks
:func:`rewrite_key` for the key of the graph it is about to rewrite and, on a hit, takes the
rewritten graph :func:`load_rewritten` returns instead of rewriting; after rewriting it
hands the result to :func:`store_rewritten`.

The key is a sha256 over

- the graph itself, pickled: every node's Op (with its parameters), every variable's
  class, Type, name and tag (creation traces included, so error reports never quote a
  stale line), every constant's value, the inputs' classes, Types and names (never a shared
  variable's value), the outputs and which of them update which input;
- what the function's inputs and outputs were declared with (``mutable``, ``borrow`` ...);
- the rewrite query (the mode's tags and the linker's), the linker, the value of every flag;
- the installed plugins, the Python and NumPy versions, and the location, size and
  modification time of every ``.py`` file of opweave and of the packages of its plugins,
  and of the file of the module of every class and function the graph refers to (an Op
  defined in the user's script, or a function an Op wraps, makes the script part of the
  key).

Two graphs with one key pickle to the same bytes, so they are the same graph; a change
to the code that rewrites changes a file and so the key. The pickle holds the nodes in
topological order with the inputs left out (written as their positions), so its depth does not grow
with the graph and loading it reattaches the nodes to this compile's inputs. A graph
that cannot be pickled (a lambda in a tag, an Op holding an open file) is rewritten as
usual and not kept.

Entries are files ``<compiledir>/rewritten/<key>.pickle``, written to a temporary file
and renamed into place; they are read only when they pass
:func:`opweave.plugins.trusted_files.read_trusted` (a file only you or root could have
written), since unpickling runs code. Neither read nor written is anything in a compile
directory (or ``rewritten/`` folder) another user could have written to or replaced
(:func:`opweave.plugins.trusted_files.unsafe_ancestry` for the directories above it): a
graph kept there, its constants included, would be theirs to read or to change. At most
:data:`MAX_ENTRIES` are kept: storing beyond that removes the least recently used ones.
"""

from __future__ import annotations

import gc
import hashlib
import io
import logging
import os
import pickle
import stat
import struct
import sys
import types
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from opweave.configdefaults import config
from opweave.graph.basic import Constant, Variable, io_toposort, nodes_saved_in_order
from opweave.graph.fg import FunctionGraph
from opweave.plugins.manager import get_plugin_manager
from opweave.plugins.trusted_files import (
    files_by_age,
    keep_newest,
    read_trusted,
    remove_quietly,
    trusted_uids,
    unsafe_ancestry,
    unsafe_reason,
    write_whole,
)

__all__ = [
    "FORMAT",
    "MAX_ENTRIES",
    "UnsafeRewriteCacheWarning",
    "cached_entries",
    "clear_rewritten",
    "load_rewritten",
    "rewrite_key",
    "store_rewritten",
]

log = logging.getLogger("opweave.compile.rewrite_cache")

#: The version of the entries' layout; part of every key.
FORMAT = 1
#: The most entries kept; storing beyond it removes the least recently used.
MAX_ENTRIES = 2000
#: Entries larger than this (big constants) are not kept.
MAX_ENTRY_BYTES = 64 << 20
#: Arrays larger than this enter a key as a digest of their bytes.
_DIGEST_BYTES = 1 << 16

#: The modules whose files are part of every key, beside those of the plugins.
_ALWAYS_STAMPED = ("opweave",)

#: What pickling and hashing can fail with on a graph that cannot be kept.
_CANNOT_PICKLE = (pickle.PicklingError, TypeError, AttributeError, RecursionError, ValueError)


class UnsafeRewriteCacheWarning(UserWarning):
    """A cached rewritten graph another user could have written was ignored, or one was
    not kept where another user could have read or changed it."""


class _GraphPickler(pickle.Pickler):
    """Notes the module of every class and function it pickles (by reference); with
    ``digest_arrays``, writes a large array as its dtype, shape and a digest of its bytes
    (for a key, which is never unpickled: a large constant is then not copied)."""

    def __init__(self, file: io.BytesIO, digest_arrays: bool) -> None:
        super().__init__(file, protocol=5)
        self.modules: set[str] = set()
        self.digest_arrays = digest_arrays

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, type | types.FunctionType | types.BuiltinFunctionType):
            module = getattr(obj, "__module__", None)
            if isinstance(module, str):
                self.modules.add(module)
        elif self.digest_arrays and type(obj) is np.ndarray and obj.nbytes > _DIGEST_BYTES:
            digest = hashlib.blake2b(np.ascontiguousarray(obj).data, digest_size=32)
            return (tuple, (("array", obj.dtype.str, obj.shape, digest.hexdigest()),))
        return NotImplemented


def _pickle_graph(
    payload: Any, inputs: Sequence[Variable], digest_arrays: bool = False
) -> tuple[bytes, set[str]]:
    """``payload`` pickled with ``inputs`` left out, and the modules of the classes and
    functions it refers to. The pickler's memo starts with the inputs, so each reference
    to input ``k`` is written as "memo entry ``k``" (no Python code runs per object for
    it, as ``persistent_id`` would). ``payload`` lists the graph's nodes leaves first, so
    they are saved plainly (:func:`~opweave.graph.basic.nodes_saved_in_order`)."""
    buffer = io.BytesIO()
    pickler = _GraphPickler(buffer, digest_arrays)
    pickler.memo = {id(var): (k, var) for k, var in enumerate(inputs)}
    with _collector_paused(), nodes_saved_in_order():
        pickler.dump(payload)
    return buffer.getvalue(), pickler.modules


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector: pickling allocates an object per graph
    object, which would otherwise start full collections over the whole heap."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class _InputsUnpickler(pickle.Unpickler):
    """Gives persistent id ``k`` as this compile's input ``k``."""

    def __init__(self, file: io.BytesIO, inputs: Sequence[Variable]) -> None:
        super().__init__(file)
        self._inputs = inputs

    def persistent_load(self, pid: Any) -> Variable:
        if not isinstance(pid, int) or not 0 <= pid < len(self._inputs):
            raise pickle.UnpicklingError(f"no input at position {pid!r}")
        return self._inputs[pid]


def _unpickle_graph(data: bytes, inputs: Sequence[Variable]) -> Any:
    """Read what :func:`_pickle_graph` wrote, with memo entry ``k`` this compile's input
    ``k``: a prefix loads each input by persistent id and memoizes it (in the order the
    pickler's memo had them) before the pickle proper."""
    if data[:2] != b"\x80\x05":
        raise pickle.UnpicklingError("not a protocol 5 pickle")
    prefix = b"".join(
        pickle.BININT + struct.pack("<i", k) + pickle.BINPERSID + pickle.MEMOIZE + pickle.POP
        for k in range(len(inputs))
    )
    with _collector_paused():
        return _InputsUnpickler(io.BytesIO(data[:2] + prefix + data[2:]), inputs).load()


@cache
def _module_stamp(name: str) -> tuple[str, str, int, int] | None:
    """``(module, file, size, mtime_ns)`` of a loaded module's file (``None`` without one).

    Taken once per process: what runs is what was imported then."""
    module = sys.modules.get(name)
    path = getattr(module, "__file__", None)
    if not isinstance(path, str):
        return None
    try:
        info = os.stat(path)
    except OSError:
        return (name, path, -1, -1)
    return (name, path, info.st_size, info.st_mtime_ns)


@cache
def _package_stamps(top: str) -> tuple[tuple[str, int, int], ...]:
    """``(file, size, mtime_ns)`` of every ``.py`` file of the package ``top`` (loaded or
    not, so the answer does not depend on what was imported before); taken once per
    process."""
    module = sys.modules.get(top)
    folders = list(getattr(module, "__path__", ()) or ())
    if not folders:
        stamp = _module_stamp(top)
        return () if stamp is None else (stamp[1:],)
    found = []
    while folders:
        folder = folders.pop()
        try:
            with os.scandir(folder) as listing:
                for entry in listing:
                    if entry.is_dir(follow_symlinks=False) and entry.name != "__pycache__":
                        folders.append(entry.path)
                    elif entry.name.endswith(".py"):
                        info = entry.stat()
                        found.append((entry.path, info.st_size, info.st_mtime_ns))
        except OSError:
            continue
    return tuple(sorted(found))


def _code_stamps(graph_modules: set[str]) -> list[Any]:
    """The stamps of every file of opweave and of the packages of its plugins, and of
    the modules in ``graph_modules``."""
    pm = get_plugin_manager()
    tops = set(_ALWAYS_STAMPED)
    for plugin in pm.get_plugins():
        module = plugin if isinstance(plugin, types.ModuleType) else type(plugin)
        tops.add(str(getattr(module, "__module__", None) or module.__name__).split(".")[0])
    stamps: list[Any] = [_package_stamps(top) for top in sorted(tops)]
    for name in sorted(graph_modules):
        if name.split(".")[0] not in tops and name not in sys.builtin_module_names:
            stamps.append(_module_stamp(name))
    return stamps


def _plugin_names() -> list[str]:
    pm = get_plugin_manager()
    return sorted(str(name) for name, _ in pm.list_name_plugin())


def rewrite_key(
    fgraph: FunctionGraph,
    input_options: Sequence[tuple[Any, ...]],
    output_options: Sequence[tuple[Any, ...]],
    query: tuple[Any, ...],
    linker: Any,
) -> str | None:
    """The key of ``fgraph`` (before rewriting) and of how it is compiled.

    Parameters
    ----------
    fgraph
        The function's graph, not yet rewritten.
    input_options, output_options
        What each explicit input and each output was declared with.
    query
        The rewrite query (``(include, exclude, require)`` tags).
    linker
        The linker (a name, a class, or an instance that can be pickled).

    Returns
    -------
    str or None
        The key, or ``None`` when the graph cannot be pickled (it is then not kept).
    """
    nodes = io_toposort(fgraph.inputs, fgraph.outputs)
    linker_part = linker if isinstance(linker, str | type) else (type(linker), vars(linker))
    payload = (
        FORMAT,
        [(type(v), v.type, v.name) for v in fgraph.inputs],
        nodes,
        fgraph.outputs,
        sorted(fgraph.update_mapping.items()),
        list(input_options),
        list(output_options),
        query,
        linker_part,
        repr(config),
        _plugin_names(),
        sys.version,
        np.__version__,
    )
    try:
        data, modules = _pickle_graph(payload, fgraph.inputs, digest_arrays=True)
    except _CANNOT_PICKLE as exc:
        log.debug("the graph is not kept rewritten: it cannot be pickled (%s)", exc)
        return None
    digest = hashlib.sha256(data)
    digest.update(repr(_code_stamps(modules)).encode())
    return digest.hexdigest()


def _folder() -> Path:
    return Path(config.compiledir) / "rewritten"


def _unsafe_folder(folder: Path) -> str | None:
    """Why another user could read, write or replace what is kept in ``folder`` (the
    ``rewritten/`` folder of a compile directory), or ``None``: the compile directory
    and ``folder``, where they exist, must be yours or root's and writable by no one
    else, and nothing above them replaceable by another user
    (:func:`opweave.plugins.trusted_files.unsafe_ancestry`)."""
    trusted = trusted_uids()
    root = folder.parent
    for path, info_of in ((root, os.stat), (folder, os.lstat)):
        try:
            info = info_of(path)
        except FileNotFoundError:
            continue
        except OSError as exc:
            return f"{path} cannot be checked: {exc.strerror or exc}"
        problem = unsafe_reason(info, trusted, stat.S_IFDIR)
        if problem is not None:
            return f"{path} {problem}"
    return unsafe_ancestry(root, trusted)


def _warn_unsafe(problem: str, doing: str) -> None:
    warnings.warn(f"{doing}: {problem}", UnsafeRewriteCacheWarning, stacklevel=4)


def load_rewritten(key: str, fgraph: FunctionGraph) -> FunctionGraph | None:
    """The rewritten graph kept under ``key``, on ``fgraph``'s inputs, or ``None``.

    An entry that cannot be read back (damaged, or from code that has since gone) is
    removed; one another user could have written is ignored with an
    :class:`UnsafeRewriteCacheWarning`.
    """
    path = _folder() / f"{key}.pickle"
    problem = _unsafe_folder(path.parent)
    if problem is not None:
        _warn_unsafe(problem, "ignored the cached rewritten graphs")
        return None
    try:
        data, problem = read_trusted(path)
    except OSError as exc:
        log.debug("cannot read %s: %s", path, exc)
        return None
    if problem is not None:
        warnings.warn(
            f"ignored a cached rewritten graph: {problem}",
            UnsafeRewriteCacheWarning,
            stacklevel=3,
        )
        return None
    if data is None:
        return None
    try:
        found_format, nodes, outputs = _unpickle_graph(data, fgraph.inputs)
        if found_format != FORMAT or len(outputs) != len(fgraph.outputs):
            raise ValueError("the entry does not match this graph")
        del nodes  # loaded so that every node of the graph is rebuilt in order
        rewritten = FunctionGraph(
            fgraph.inputs, outputs, clone=False, update_mapping=fgraph.update_mapping
        )
    except Exception as exc:  # any damaged entry is rebuilt, never fatal
        log.info("dropping the cached rewritten graph %s: %s: %s", path, type(exc).__name__, exc)
        remove_quietly(path)
        return None
    _touch(path)
    return rewritten


def store_rewritten(key: str, fgraph: FunctionGraph) -> None:
    """Keep the rewritten ``fgraph`` under ``key`` (quietly nothing when it cannot be
    pickled or the compile directory cannot be written)."""
    nodes = io_toposort(fgraph.inputs, fgraph.outputs)
    constants = {id(v): v for n in nodes for v in n.inputs if isinstance(v, Constant)}
    held = sum(getattr(getattr(c, "data", None), "nbytes", 0) for c in constants.values())
    if held > MAX_ENTRY_BYTES:  # not even pickled
        return
    try:
        data, _ = _pickle_graph((FORMAT, nodes, fgraph.outputs), fgraph.inputs)
    except _CANNOT_PICKLE as exc:
        log.debug("the rewritten graph is not kept: it cannot be pickled (%s)", exc)
        return
    if len(data) > MAX_ENTRY_BYTES:
        return
    folder = _folder()
    problem = _unsafe_folder(folder)
    if problem is not None:
        _warn_unsafe(problem, "did not keep the rewritten graph")
        return
    try:
        write_whole(folder / f"{key}.pickle", data)
    except OSError as exc:
        log.debug("cannot keep the rewritten graph in %s: %s", folder, exc)
        return
    keep_newest(folder, ".pickle", MAX_ENTRIES)


def _touch(path: Path) -> None:
    try:
        os.utime(path)
    except OSError:
        pass


def cached_entries() -> list[Path]:
    """The entries under the current ``config.compiledir``, least recently used first."""
    return files_by_age(_folder(), ".pickle")


def clear_rewritten() -> int:
    """Remove every entry under the current ``config.compiledir``; return how many."""
    found = cached_entries()
    for path in found:
        remove_quietly(path)
    return len(found)
