"""Turning generated blocks into a loaded extension module, through cffi and the cache.

One module holds one or more blocks. Its source is the shared runtime
(``csrc/runtime.h`` and ``csrc/runtime_functions.h``), every header and support code
the blocks' Types and Ops ask for (deduplicated, in first-seen order), the block
functions, and ``opw_install``: the one function cffi exports. Installing imports
NumPy's C API (for the module and the runtime's functions), runs the ``c_init_code``
snippets, and attaches ``link_<block>`` functions to the module, and ``link_steps``
(the runtime's loop over bound blocks and Python callables, :mod:`opweave_c.linkers.c_loop`).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import io
import os
import platform
import re
import shutil
import sys
import tempfile
import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from opweave.graph.fg import FunctionGraph
from opweave.link.deferred import has_deferred, run_deferred
from opweave.link.progress import current as current_progress
from opweave.link.threads import usable_cpus
from opweave_c.cache import CorruptEntryWarning, ModuleCache, cache_for_config
from opweave_c.codegen import Block, block_versions, nodes_at_lines
from opweave_c.compiler import CCompiler
from opweave_c.contract import as_snippets, call_optional, call_with_compiler
from opweave_c.errors import CompilationError, ModuleInitError
from opweave_c.prelude import (
    include_args,
    object_pending,
    own_module_flags,
    prelude_dir,
    runtime_object,
    settle_build,
    start_precompiling,
    wait_for_object,
)

#: The runtime's header: types, macros and inline helpers (precompiled by the prelude).
RUNTIME = (Path(__file__).parent / "csrc" / "runtime.h").read_text()
#: The runtime's functions: compiled into each module, or once into the prelude's object.
RUNTIME_FUNCTIONS = (Path(__file__).parent / "csrc" / "runtime_functions.h").read_text()
#: Bump when the runtime or the block layout changes: part of every cache key.
RUNTIME_VERSION = 8
#: The define a module is compiled with when it is linked with the runtime's object.
LINKED_DEFINE = "-DOPW_RUNTIME_LINKED"
#: How long a module compiled beside the runtime's object waits for it, once its own code
#: is compiled (seconds). The object takes about 0.33 s of CPU, about four fifths of a
#: small module's build without it, and is built once per compile directory; a build still
#: running after this long (a machine far too busy) is not waited for, and the module is
#: built whole.
OBJECT_WAIT_SECONDS = 2.0
CDEF = "int opw_install(void);"
#: Flags of a module whose C is all opweave-c's own: the glue at -O1, the functions marked
#: ``OPW_HOT`` (the loops) at -O3 through GCC's ``optimize`` attribute (``csrc/runtime.h``).
#: It builds in about two thirds of the time and runs as fast; code from elsewhere (an Op or
#: Type with C of its own, another plugin's) is always built at -O3 throughout.
FAST_BUILD_ARGS = ("-O1", "-DOPW_FAST_BUILD")


def _opweave_own(obj: Any) -> bool:
    """Is ``obj`` (a Type's or Op's C implementation) one of opweave-c's own, carrying no
    C from elsewhere (scalar Ops' own ``c_code`` inside an Elemwise, say)? The core's
    classes count as own: the core holds no C, their C is what opweave-c registers for them
    (``Shape_i``'s, say)."""
    if not type(obj).__module__.startswith(("opweave_c.", "opweave.")):
        return False
    own = getattr(obj, "own", None)
    return own is None or not getattr(own, "items", ())


@dataclass
class ModuleSpec:
    """Everything a module's source and build need, gathered from its blocks."""

    blocks: list[Block]
    headers: list[str] = field(default_factory=list)
    support: list[str] = field(default_factory=list)
    init: list[str] = field(default_factory=list)
    compile_args: list[str] = field(default_factory=list)
    no_compile_args: list[str] = field(default_factory=list)
    include_dirs: list[str] = field(default_factory=list)
    lib_dirs: list[str] = field(default_factory=list)
    libraries: list[str] = field(default_factory=list)
    compiler: CCompiler | None = None
    #: Whether every Type and Op is opweave-c's own (the module gets
    #: :func:`~opweave_c.prelude.own_module_flags`, and the runtime's prelude is built for it).
    own: bool = False

    @classmethod
    def gather(cls, blocks: list[Block], compiler: CCompiler | None = None) -> ModuleSpec:
        """Collect the C contract pieces of every Type and Op of ``blocks``."""
        spec = cls(blocks)
        compiler = compiler or CCompiler.from_config()
        seen_objects: list[Any] = []
        seen_ids: set[int] = set()
        for block in blocks:
            for obj, _node in block.objects:
                if id(obj) in seen_ids:
                    continue
                seen_ids.add(id(obj))
                seen_objects.append(obj)
                own = call_optional(obj, "c_compiler", default=None)
                if own is not None:
                    compiler = own if isinstance(own, CCompiler) else CCompiler(str(own))
        spec.compiler = compiler
        if compiler.is_gcc and all(_opweave_own(obj) for obj in seen_objects):
            # Every such module gets the flags of the loops' modules, those it needs or not
            # (-ffp-contract=off, the vector ISA): one set of flags, so every module of
            # opweave-c's own, even one of shapes and views alone, links the runtime's
            # object built for them (opweave_c.prelude).
            spec.compile_args += own_module_flags()
            spec.own = True
        for obj in seen_objects:
            spec.headers += call_with_compiler(obj, "c_headers", compiler)
            spec.include_dirs += call_with_compiler(obj, "c_header_dirs", compiler)
            spec.lib_dirs += call_with_compiler(obj, "c_lib_dirs", compiler)
            spec.libraries += call_with_compiler(obj, "c_libraries", compiler)
            spec.compile_args += call_with_compiler(obj, "c_compile_args", compiler)
            spec.no_compile_args += call_with_compiler(obj, "c_no_compile_args", compiler)
            spec.support += as_snippets(call_optional(obj, "c_support_code", default=""))
            spec.init += as_snippets(call_optional(obj, "c_init_code", default=[]))
        for block in blocks:
            spec.support += block.support_apply
            spec.init += block.init_apply
        for name in (
            "headers",
            "support",
            "init",
            "compile_args",
            "include_dirs",
            "lib_dirs",
            "libraries",
            "no_compile_args",
        ):
            setattr(spec, name, list(dict.fromkeys(getattr(spec, name))))
        return spec

    @property
    def versioned(self) -> bool:
        """True when every Type and Op involved gives a non-empty cache version."""
        return all(v for block in self.blocks for v in block_versions(block))

    def source(self, modname: str) -> str:
        """The module's C source (without cffi's wrapper)."""
        includes = []
        for h in self.headers:
            h = h.strip()
            includes.append(f"#include {h}" if h[0] in '<"' else f"#include <{h}>")
        links, installs = [], []
        for block in self.blocks:
            n_in, n_out = len(block.inputs), len(block.outputs)
            links.append(
                f"static PyObject* link_{block.fn_name}(PyObject* self, PyObject* args) {{\n"
                f"    return opw_link({block.fn_name}, {n_in}, {n_out}, args);\n}}\n"
                f"static PyMethodDef def_{block.fn_name} = "
                f'{{"link_{block.fn_name}", link_{block.fn_name}, METH_VARARGS, NULL}};'
            )
            installs.append(
                f"    f = PyCFunction_NewEx(&def_{block.fn_name}, NULL, NULL);\n"
                f'    if (!f || PyObject_SetAttrString(m, "link_{block.fn_name}", f) < 0) '
                "goto done;\n    Py_CLEAR(f);"
            )
        init = "\n".join("    {\n" + snippet + "\n    }" for snippet in self.init)
        install = f"""
static PyMethodDef opw_link_steps_def = {{"link_steps", opw_link_steps, METH_VARARGS, NULL}};
static int opw_installed = 0;
int opw_install(void) {{
    PyGILState_STATE gil = PyGILState_Ensure();
    PyObject *m = NULL, *f = NULL;
    int rc = -1;
    if (opw_installed) {{ rc = 0; goto done; }}
    m = PyImport_ImportModule("{modname}");
    if (!m) goto done;
    if (_import_array() < 0 || opw_runtime_init() < 0) goto done;
{init}
    if (PyErr_Occurred()) goto done;
{chr(10).join(installs)}
    f = PyCFunction_NewEx(&opw_link_steps_def, NULL, NULL);
    if (!f || PyObject_SetAttrString(m, "link_steps", f) < 0) goto done;
    Py_CLEAR(f);
    opw_installed = 1;
    rc = 0;
done:
    if (rc != 0 && m != NULL) {{
        PyObject *t, *v, *tb;
        PyErr_Fetch(&t, &v, &tb);
        PyErr_NormalizeException(&t, &v, &tb);
        if (v) PyObject_SetAttrString(m, "install_error", v);
        Py_XDECREF(t); Py_XDECREF(v); Py_XDECREF(tb);
    }}
    PyErr_Clear();
    Py_XDECREF(f);
    Py_XDECREF(m);
    PyGILState_Release(gil);
    return rc;
}}
"""
        parts = [RUNTIME, RUNTIME_FUNCTIONS, *includes, *self.support]
        parts += [block.code for block in self.blocks]
        parts += links
        parts.append(install)
        return "\n\n".join(parts)

    def key(self, source: str) -> str:
        """sha256 over the source, flags, versions and the toolchain's identity."""
        assert self.compiler is not None
        h = hashlib.sha256()
        for part in (
            source,
            repr(
                self.compiler.command_line(
                    "",
                    "",
                    self.compile_args,
                    self.include_dirs,
                    self.lib_dirs,
                    self.libraries,
                    self.no_compile_args,
                )
            ),
            repr([block_versions(b) for b in self.blocks]),
            f"runtime {RUNTIME_VERSION}",
            f"numpy C ABI {numpy_abi_version()} / {np.__version__}",
            f"python {sys.version} {sys.implementation.cache_tag} {platform.machine()}",
            f"cffi {_cffi_version()}",
            self.compiler.identity,
        ):
            h.update(part.encode())
            h.update(b"\0")
        return h.hexdigest()


@functools.cache
def runtime_object_source() -> str:
    """The text the prelude compiles into the runtime's object: the runtime's header and
    functions, the TensorType helpers (``csrc/tensor.h``), which nearly every module
    carries, and the reductions' loop plan (``csrc/reduce_plan.h``)."""
    from opweave_c.impls.reduce_loops import REDUCE_PLAN
    from opweave_c.impls.tensor_type import TENSOR_SUPPORT

    return "\n\n".join((RUNTIME, RUNTIME_FUNCTIONS, TENSOR_SUPPORT, REDUCE_PLAN))


def _discard_runtime_object(path: Path) -> None:
    """Remove a runtime object a module failed to build with, though it built without
    it (the next large compile builds it again), and say so."""
    warnings.warn(
        f"opweave: the C runtime object {path} could not be linked into a module that "
        "builds without it; removed it",
        CorruptEntryWarning,
        stacklevel=2,
    )
    path.unlink(missing_ok=True)


def _with_failing_nodes(exc: CompilationError, c_path: Path, tmp: Path) -> CompilationError:
    """Name the nodes whose code the compiler's errors point at; keep the source apart.

    The compiler's error comes first and always reaches the user: the build directory is
    kept by renaming it (which needs no free space, unlike a copy), and a failure to keep
    it, to read the source back or to name the nodes only adds a note to the message.
    """
    message = str(exc)
    try:
        source = c_path.read_text()
        lines = [int(m) for m in re.findall(rf"{re.escape(c_path.name)}:(\d+):\d+: error", message)]
        nodes = nodes_at_lines(source, lines)
        if nodes:
            message = f"C code of node {'; '.join(nodes)} does not compile.\n{message}"
    except Exception:  # naming the nodes is a courtesy: the compiler's error must get out
        pass
    kept = tmp.parent / f"failed-{tmp.name}"
    try:
        os.replace(tmp, kept)
    except OSError as keep_error:
        note = f"(the source could not be kept: {type(keep_error).__name__}: {keep_error})"
        message = message.replace(f"Source kept at: {c_path}", f"Source: {c_path} {note}")
        if note not in message:
            message = f"{message}\n{note}"
        return CompilationError(message, None, exc.what)
    source_path = kept / c_path.name
    return CompilationError(
        message.replace(str(c_path), str(source_path)), str(source_path), exc.what
    )


def numpy_abi_version() -> str:
    """NumPy's C ABI version (what compiled extensions depend on)."""
    try:
        from numpy._core._multiarray_umath import _get_ndarray_c_version
    except ImportError:  # NumPy < 2
        from numpy.core._multiarray_umath import _get_ndarray_c_version  # type: ignore
    return hex(_get_ndarray_c_version())


def build_module(
    blocks: list[Block],
    what: str,
    cache: ModuleCache | None = None,
    compiling: Callable[[], None] | None = None,
) -> ModuleType:
    """Generate, build (or find in the cache) and load the module holding ``blocks``;
    ``compiling`` is called when the C compiler is about to start (not for a module found
    in the cache)."""
    spec = ModuleSpec.gather(blocks)
    draft = spec.source("@MODNAME@")
    key = spec.key(draft)
    versioned = spec.versioned
    modname = f"opw_{key[:40]}" if versioned else f"opw_u{key[:39]}"
    loaded = installed_module(modname)
    if loaded is not None:
        return loaded
    source = draft.replace("@MODNAME@", modname)
    cache = cache or cache_for_config()

    def build(tmp: Path) -> dict[str, Any]:
        import cffi  # imported for builds only: loading a cached module needs none of it
        from cffi.recompiler import make_c_source

        ffi = cffi.FFI()
        ffi.cdef(CDEF)
        c_path = tmp / f"{modname}.c"
        # cffi's API mode: its wrapper around our source, written without a build step of
        # cffi's own, so that the compiler, flags and timing stay ours.
        text = io.StringIO()
        make_c_source(ffi, modname, source, text, verbose=False)
        write_c_source(c_path, text.getvalue(), what)
        lib_name = f"{modname}.so"
        assert spec.compiler is not None
        compiler = spec.compiler
        # The runtime's precompiled header and object, where built for these flags: not
        # part of the key, since they change how fast the module builds, not what it
        # computes.
        prelude = prelude_dir(
            cache.root, compiler, spec.compile_args, spec.include_dirs, runtime_object_source()
        )
        settle_build(prelude)
        header = include_args(prelude)

        def compile_module(runtime: Path | None) -> None:
            compiler.build(
                str(c_path),
                str(tmp / lib_name),
                what,
                compile_args=[*header, *([LINKED_DEFINE] if runtime else []), *spec.compile_args],
                include_dirs=spec.include_dirs,
                lib_dirs=spec.lib_dirs,
                libraries=spec.libraries,
                no_compile_args=spec.no_compile_args,
                objects=[str(runtime)] if runtime else [],
            )

        def compile_beside_object() -> Path | None:
            # The module's own code compiles while the runtime's object builds; the two
            # are linked once both are done. Returns the object, or None when its build
            # did not end with one (the module is then built whole).
            own_object = tmp / f"{modname}.o"
            compiler.build(
                str(c_path),
                str(own_object),
                what,
                compile_args=[*header, LINKED_DEFINE, *spec.compile_args],
                include_dirs=spec.include_dirs,
                lib_dirs=[],
                libraries=[],
                no_compile_args=spec.no_compile_args,
                compile_only=True,
            )
            found = wait_for_object(prelude, OBJECT_WAIT_SECONDS)
            if found is None:
                compile_module(None)
                return None
            try:
                compiler.link(
                    [str(own_object), str(found)],
                    str(tmp / lib_name),
                    str(c_path),
                    what,
                    compile_args=spec.compile_args,
                    lib_dirs=spec.lib_dirs,
                    libraries=spec.libraries,
                    no_compile_args=spec.no_compile_args,
                )
            except CompilationError:  # an object that does not link: as in a whole build
                compile_module(None)
                _discard_runtime_object(found)
                return None
            return found

        runtime = runtime_object(prelude)
        if runtime is None and spec.own and cache.read_only is None:
            # Built once per compile directory, for every module to come.
            start_precompiling(
                prelude,
                compiler,
                spec.compile_args,
                spec.include_dirs,
                RUNTIME,
                runtime_object_source(),
                with_header=usable_cores() >= HEADER_MIN_CORES,
            )
        beside = runtime is None and object_pending(prelude)
        if compiling is not None:
            compiling()
        try:
            try:
                if beside:
                    runtime = compile_beside_object()
                else:
                    compile_module(runtime)
            except CompilationError:
                if runtime is None:
                    raise
                compile_module(None)
                _discard_runtime_object(runtime)
        except CompilationError as exc:
            raise _with_failing_nodes(exc, c_path, tmp) from None
        return {"library": lib_name, "module": modname, "what": what, "versioned": versioned}

    entry = cache.get_or_build(key, build, what) if versioned else cache.build_private(build, what)
    try:
        try:
            return load_module(modname, entry.library)
        except ModuleInitError:
            raise
        except ImportError as exc:
            if entry.fresh:
                raise
            failed, reason = entry, exc
        # A cached shared object that passed its checks but does not load (empty, garbage
        # with a matching sha256): report it once, discard it and build it again.
        warnings.warn(
            f"opweave: corrupt C cache entry {failed.path} (its shared object cannot be "
            f"loaded: {reason}); rebuilding it",
            CorruptEntryWarning,
            stacklevel=2,
        )
        entry = cache.get_or_build(key, build, what, failed=failed)
        # This process has mapped the failed shared object from the entry's path, and the
        # dynamic loader answers a second load from that path with the object it mapped:
        # the rebuilt one is loaded through a path of its own.
        return load_module_afresh(modname, entry.library, cache.root / "tmp")
    finally:
        if entry.private:
            shutil.rmtree(entry.path, ignore_errors=True)


#: A graph's functions are split over several modules (built in parallel) only when each
#: module gets at least this many lines of generated C: a module has a fixed cost of its own
#: (Python's and NumPy's headers, the runtime), worth paying on another core only when the
#: compiler has enough to optimise besides.
MIN_LINES_PER_MODULE = 300
#: And no module gets more than this many functions, so no compiler run grows without bound.
MAX_BLOCKS_PER_MODULE = 64
#: A module gets more lines than this only when one function alone has more: GCC's time
#: grows faster than a module's size, so a very large graph builds as more modules of
#: about this size (still ``jobs`` at a time) rather than as ``jobs`` ever larger ones.
MAX_LINES_PER_MODULE = 5000


def block_lines(block: Block) -> int:
    """How many lines of C ``block`` adds to a module (its function, support and init
    code)."""
    parts = (block.code, *block.support_apply, *block.init_apply)
    return sum(part.count("\n") + 1 for part in parts)


def _support_snippets(block: Block) -> list[str]:
    """The support code of the Types and Ops of ``block`` (``c_support_code``)."""
    found: list[str] = []
    for obj, _node in block.objects:
        found += as_snippets(call_optional(obj, "c_support_code", default=""))
    return found


def block_weights(blocks: list[Block]) -> dict[str, int]:
    """What each of ``blocks`` costs a module's compile, in lines: :func:`block_lines`,
    plus the lines of support code its Types and Ops bring that no other of ``blocks``
    brings (a reduction's kernels, say). Support code several blocks share is compiled
    once per module whatever goes where, so it weighs nothing; most of it is unused
    inline helpers, which cost the compiler little. The measure by which
    :func:`build_modules` balances its modules.
    """
    snippets = {block.fn_name: set(_support_snippets(block)) for block in blocks}
    users: dict[str, int] = {}
    for found in snippets.values():
        for snippet in found:
            users[snippet] = users.get(snippet, 0) + 1
    return {
        block.fn_name: block_lines(block)
        + sum(s.count("\n") + 1 for s in snippets[block.fn_name] if users[s] == 1)
        for block in blocks
    }


def split_blocks(blocks: list[Block], jobs: int) -> list[list[Block]]:
    """Split ``blocks`` into the modules :func:`build_modules` builds.

    As many modules as there are ``jobs``, each with at least :data:`MIN_LINES_PER_MODULE`
    lines of C, and more where needed for none to have more than
    :data:`MAX_BLOCKS_PER_MODULE` functions or (about) :data:`MAX_LINES_PER_MODULE` lines; the
    functions go, heaviest first (:func:`block_weights`), to the module with the least
    weight so far, so the modules take about as long to compile. The same set of blocks
    always gives the same modules (and cache entries), in whatever order it comes.
    """
    by_name = {block.fn_name: block for block in blocks}
    weights = block_weights(list(by_name.values()))
    n = len(by_name)
    lines = sum(block_lines(block) for block in by_name.values())
    wanted = min(jobs, n, lines // MIN_LINES_PER_MODULE)
    bounded = min(n, -(-lines // MAX_LINES_PER_MODULE))
    groups_wanted = max(-(-n // MAX_BLOCKS_PER_MODULE), bounded, wanted, 1)
    groups: list[list[str]] = [[] for _ in range(groups_wanted)]
    loads = [0] * groups_wanted
    for name in sorted(by_name, key=lambda name: (-weights[name], name)):
        open_groups = [g for g in range(groups_wanted) if len(groups[g]) < MAX_BLOCKS_PER_MODULE]
        target = min(open_groups, key=lambda g: (loads[g], g))
        groups[target].append(name)
        loads[target] += weights[name]
    return [[by_name[name] for name in sorted(group)] for group in groups if group]


#: The runtime's precompiled header is built in the background only with at least this
#: many usable cores: the object's build takes the core rewriting leaves idle, and with
#: 2 cores the header's build beside it slowed the rewriting (by up to 0.15 s on the
#: 120-block graph) and was mostly stopped unfinished when the modules started building.
HEADER_MIN_CORES = 4


def start_runtime_prelude(fgraph: FunctionGraph | None = None) -> None:
    """Start compiling the runtime for modules of opweave-c's own
    (:func:`opweave_c.prelude.start_precompiling`), in the background: its object, and
    its precompiled header with at least :data:`HEADER_MIN_CORES` usable cores; nothing
    when they are built already, when the compile directory cannot be written or the
    compiler is not GCC, or when the graph about to be rewritten has no node of the core's
    Ops (a graph of a plugin's Ops alone, whose modules are not built with the object).

    Called before a graph is rewritten, whatever its size: the first module a compile
    directory builds waits for the object (it compiles its own code meanwhile, then links
    the two), so the object's build may as well start while the graph is rewritten, on the
    core rewriting leaves idle (on 2 cores this took 60 to 80 ms off the first compile of
    ``exp(x) * y + z``). Once the object is built, this costs a few stat calls.
    """
    if fgraph is not None and not any(_core_op(node.op) for node in fgraph.apply_nodes):
        return  # no node of the core's Ops: its modules are unlikely to be opweave-c's own
    from opweave import config  # late: opweave's package init is above the link floor

    compiler = CCompiler.from_config()
    if not compiler.is_gcc:
        return
    flags = own_module_flags()
    text = runtime_object_source()
    root = Path(config.compiledir).expanduser()
    built = prelude_dir(root, compiler, flags, [], text)
    if runtime_object(built) is not None and (include_args(built) or _too_few_for_header()):
        return  # built: the usual case, checked without the compile directory's setup
    try:
        cache = cache_for_config()
    except OSError:  # an unsafe or unusable compile directory: the build will say so
        return
    if cache.read_only is not None:
        return
    with_header = usable_cores() >= HEADER_MIN_CORES  # ``built`` is under cache.root
    start_precompiling(built, compiler, flags, [], RUNTIME, text, with_header)


def _core_op(op: Any) -> bool:
    """Whether ``op`` is one of the core's Ops, whose C is opweave-c's own."""
    return type(op).__module__.startswith("opweave.")


def _too_few_for_header() -> bool:
    """Fewer usable cores than :data:`HEADER_MIN_CORES` (the affinity mask first: it
    costs a microsecond where the cgroup's quota costs a hundred)."""
    affinity = getattr(os, "sched_getaffinity", None)
    if affinity is not None and len(affinity(0)) < HEADER_MIN_CORES:
        return True
    return usable_cores() < HEADER_MIN_CORES


def usable_cores() -> int:
    """How many cores this process may run on: :func:`opweave.link.threads.usable_cpus`
    (its affinity, bounded by its cgroup CPU quota)."""
    return usable_cpus()


def build_jobs() -> int:
    """How many modules may build at once: the ``c__build_jobs`` flag, 0 = usable cores."""
    from opweave import config  # late: opweave's package init is above the link floor

    jobs = int(getattr(config, "c__build_jobs", 0) or 0)
    return jobs if jobs > 0 else usable_cores()


def build_modules(
    blocks: list[Block], what: str, cache: ModuleCache | None = None, jobs: int | None = None
) -> dict[str, ModuleType]:
    """Build ``blocks`` into one module or, when there is much C, into several at once.

    The blocks are split by :func:`split_blocks` (as many modules as jobs, when each gets
    enough C to be worth a compiler run of its own) and each module is built (or found in
    the cache) by :func:`build_module`, up to ``jobs`` at a time (default
    :func:`build_jobs`) in threads of their own (:func:`_build_in_threads`), while this
    thread runs the steps the compile deferred; with one job, or one module and no
    deferred step, in this thread.

    Returns
    -------
    dict
        Block function name -> the loaded module holding it.
    """
    if not blocks:
        return {}
    jobs = jobs or build_jobs()
    cache = cache or cache_for_config()
    groups = split_blocks(blocks, jobs)
    label = "compiling C modules" if len(groups) > 1 else "compiling C module"
    with current_progress().steps(f"{label} ({len(blocks)} functions)", len(groups)) as steps:
        if jobs == 1 or (len(groups) == 1 and not has_deferred()):
            built = []
            for group in groups:
                built.append(build_module(group, what, cache))
                steps.advance()
        else:
            built = _build_in_threads(groups, what, cache, min(jobs, len(groups)), steps)
    return {
        block.fn_name: module
        for group, module in zip(groups, built, strict=True)
        for block in group
    }


def _build_in_threads(
    groups: list[list[Block]], what: str, cache: ModuleCache, workers: int, steps: Any
) -> list[ModuleType]:
    """:func:`build_module` of each group, ``workers`` at a time in threads of their own,
    while this thread runs the compile's deferred steps
    (:func:`opweave.link.deferred.run_deferred`) once the first compilers have started
    (before then, the steps would only hold up writing their sources); an error of a
    build is raised here.

    Plain threads, not a pool: a pool's first use imports ``concurrent.futures``, which
    fails for a user who cannot read a standard library that is not imported yet."""
    import contextvars
    import threading

    results: list[ModuleType | None] = [None] * len(groups)
    failures: list[BaseException] = []
    started = [threading.Event() for _ in groups]
    todo = list(range(len(groups)))
    lock = threading.Lock()

    def work() -> None:
        while True:
            with lock:
                if not todo or failures:
                    return
                i = todo.pop(0)
            try:
                results[i] = build_module(groups[i], what, cache, started[i].set)
                steps.advance()
            except BaseException as exc:  # handed to the waiting thread
                with lock:
                    failures.append(exc)
                for event in started:  # no more builds start: nothing more to wait for
                    event.set()
            finally:
                started[i].set()

    threads = [  # each in a copy of this context: the configuration this compile sees
        threading.Thread(
            target=contextvars.copy_context().run, args=(work,), name=f"opweave-c build {n}"
        )
        for n in range(workers)
    ]
    for thread in threads:
        thread.start()
    try:
        for event in started[:workers]:
            event.wait()
        run_deferred()
    finally:
        for thread in threads:
            thread.join()
    if failures:
        raise failures[0]
    return [module for module in results if module is not None]


def write_c_source(path: Path, text: str, what: str) -> None:
    """Write a module's C source ``text`` to ``path``.

    Raises
    ------
    OSError
        With the errno of the failure, naming the file and what it holds (a full disk
        says where the compile directory is, not only "No space left on device").
    """
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise OSError(
            exc.errno,
            f"cannot write the C source of {what} ({len(text)} characters) to {path}: "
            f"{reason}; free space there or set config.compiledir to another directory",
            str(path),
        ) from exc


def _new_load_lock() -> threading.Lock:
    return threading.Lock()


#: Held while a module is loaded and installed, so that no thread sees a module that is
#: in ``sys.modules`` before its ``link_*`` functions are attached. Re-created in a child
#: process after ``os.fork`` (another thread of the parent may have held it).
_load_lock = _new_load_lock()


def _reset_load_lock_after_fork() -> None:
    global _load_lock
    _load_lock = _new_load_lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_load_lock_after_fork)

#: The attribute a module gets once ``opw_install`` has succeeded.
READY = "opw_ready"


def installed_module(modname: str) -> ModuleType | None:
    """The module ``modname`` when it is loaded and installed (its ``link_*`` functions
    attached), else ``None``: one another thread is still installing is not returned."""
    module = sys.modules.get(modname)
    if module is not None and getattr(module, READY, False):
        return module
    return None


def load_module(modname: str, path: Path) -> ModuleType:
    """Import the cffi module at ``path`` and install its entry points.

    Thread-safe: the module enters ``sys.modules`` (where ``opw_install`` finds it) only
    under a lock, and is returned to any thread only once installed; a thread loading a
    module another thread is loading waits for it and gets the same module.

    Raises
    ------
    ImportError
        When the shared object cannot be loaded.
    ModuleInitError
        When its initialisation fails (an ``ImportError`` too).
    """
    with _load_lock:
        ready = installed_module(modname)
        if ready is not None:
            return ready
        spec = importlib.util.spec_from_file_location(modname, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load compiled module {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[modname] = module
        try:
            spec.loader.exec_module(module)
            if module.lib.opw_install() != 0:
                error = getattr(module, "install_error", None)
                raise ModuleInitError(
                    f"initialising compiled module {path} failed: {error!r}"
                ) from error
            setattr(module, READY, True)
        except BaseException:
            sys.modules.pop(modname, None)
            raise
        return module


def load_module_afresh(modname: str, path: Path, scratch: Path) -> ModuleType:
    """:func:`load_module` through a path this process has never loaded from: a hard
    link to (or, where none can be made, a copy of) ``path`` in a private directory made
    under ``scratch`` (the system's temporary directory when that cannot be written),
    removed once loaded.

    A shared object the process has mapped stays mapped, and the dynamic loader answers
    every later load from the same path with it, even after the file there was replaced.
    """
    try:
        folder = Path(tempfile.mkdtemp(prefix="reload-", dir=scratch))
    except OSError:
        folder = Path(tempfile.mkdtemp(prefix="opweave-c-reload-"))
    try:
        fresh = folder / path.name
        try:
            os.link(path, fresh)
        except OSError:
            shutil.copyfile(path, fresh)
        return load_module(modname, fresh)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _cffi_version() -> str:
    """cffi's version (part of every cache key), read from its C backend, which is fast
    to import (``import cffi`` is not)."""
    import _cffi_backend

    return str(_cffi_backend.__version__)
