"""The module cache: reuse across processes, concurrent builds, corruption, unversioned
code, compiler errors, a safe compile directory, and the ``cache`` command."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

import opweave
from opweave import graph as gof
from opweave.compile import Mode
from opweave_c import CompilationError
from opweave_c.cache import CorruptEntryWarning, ModuleCache
from opweave_c.errors import CacheDirError

#: Compiles the tutorial example in a fresh process and says whether it had to build.
SCRIPT = textwrap.dedent(
    """
    import logging, sys
    logging.basicConfig(level=logging.DEBUG, stream=sys.stderr, format="%(name)s %(message)s")
    import opweave
    from opweave.compile import Mode
    from opweave_double import add, double, mul
    x, y, z = double("x"), double("y"), double("z")
    expr = mul(add(x, y), z)
    if len(sys.argv) > 1 and sys.argv[1] == "unversioned":
        from opweave import graph as gof

        class TutorialDouble(gof.Type):
            # the C tutorial's final version: no c_code_cache_version
            def filter(self, x, strict=False, allow_downcast=None):
                return float(x)
            def __eq__(self, other):
                return type(self) is type(other)
            def __hash__(self):
                return hash(type(self))
            def c_declare(self, name, sub):
                return "double %(name)s;" % dict(name=name)
            def c_init(self, name, sub):
                return "%(name)s = 0.0;" % dict(name=name)
            def c_extract(self, name, sub):
                return ("if (!PyFloat_Check(py_%(name)s)) {PyErr_SetString(PyExc_TypeError, "
                        "\\"expected a float\\"); %(fail)s}"
                        "%(name)s = PyFloat_AsDouble(py_%(name)s);") % dict(sub, name=name)
            def c_sync(self, name, sub):
                return ("Py_XDECREF(py_%(name)s); py_%(name)s = PyFloat_FromDouble(%(name)s);"
                        % dict(name=name))
            def c_cleanup(self, name, sub):
                return ""

        class Neg(gof.Op):
            __props__ = ()
            def make_node(self, x):
                return gof.Apply(self, [x], [x.type()])
            def c_code(self, node, name, inputs, outputs, sub):
                return "%s = -%s;" % (outputs[0], inputs[0])

        t = TutorialDouble()
        x = t("x")
        f = opweave.function([x], Neg()(x), mode=Mode(linker="c"))
        print("RESULT", f(2.0))
    else:
        f = opweave.function([x, y, z], expr, mode=Mode(linker=sys.argv[1]))
        print("RESULT", f(1.0, 2.0, 3.0))
    """
)


def run_compile(compiledir: Path, linker: str = "c") -> tuple[str, int]:
    """Run the script in a fresh process; return (stdout, number of builds it did)."""
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, linker],
        capture_output=True,
        text=True,
        env={**os.environ, "OPWEAVE_FLAGS": f"compiledir={compiledir}"},
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr
    builds = sum("opweave_c.cache compiling" in line for line in proc.stderr.splitlines())
    return proc.stdout, builds


def test_hit_across_processes(tmp_path) -> None:
    out, builds = run_compile(tmp_path)
    assert "RESULT 9.0" in out and builds == 1
    cache = ModuleCache(tmp_path)
    (entry,) = cache.entries()
    lib_stat = entry.library.stat()
    out, builds = run_compile(tmp_path)
    assert "RESULT 9.0" in out and builds == 0
    assert [e.key for e in cache.entries()] == [entry.key]
    assert entry.library.stat().st_mtime_ns == lib_stat.st_mtime_ns
    source = entry.path / f"{entry.meta['module']}.c"
    assert "V3 = V0 + V1;" in source.read_text()  # the source is kept next to the module


def test_a_cache_hit_in_a_new_process_does_not_start_the_compiler(tmp_path) -> None:
    """The compiler's identity (part of every key) is remembered per compiler binary."""
    log = tmp_path / "calls.log"
    wrapper = tmp_path / "cc-logged"
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> {log}\nexec cc "$@"\n')
    wrapper.chmod(0o755)
    compiledir = tmp_path / "compiledir"
    env = {**os.environ, "OPWEAVE_FLAGS": f"compiledir={compiledir},cxx={wrapper}"}
    for _ in range(2):
        proc = subprocess.run(
            [sys.executable, "-c", SCRIPT, "c"], capture_output=True, text=True, env=env
        )
        assert proc.returncode == 0, proc.stderr
        assert "RESULT 9.0" in proc.stdout
    calls = log.read_text().splitlines()
    assert calls.count("--version") == 1  # the first process asked; the second remembered
    assert len(calls) == 2  # and one build
    (memo,) = (compiledir / "compilers").iterdir()
    assert memo.read_text().split("\n")[1].startswith(f"{wrapper}: ")


def test_concurrent_processes_build_one_entry(tmp_path) -> None:
    env = {**os.environ, "OPWEAVE_FLAGS": f"compiledir={tmp_path}"}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", SCRIPT, "c"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(4)
    ]
    results = [p.communicate(timeout=240) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in results]
    assert all("RESULT 9.0" in out for out, _ in results)
    builds = sum(err.count("opweave_c.cache compiling") for _, err in results)
    assert builds == 1
    assert len(ModuleCache(tmp_path).entries()) == 1
    assert list((tmp_path / "tmp").iterdir()) == []


def test_corrupt_entry_is_reported_and_rebuilt(tmp_path) -> None:
    run_compile(tmp_path)
    (entry,) = ModuleCache(tmp_path).entries()
    data = entry.library.read_bytes()
    entry.library.write_bytes(data[: len(data) // 2])  # truncated, as after a full disk
    proc = subprocess.run(
        [sys.executable, "-W", "always", "-c", SCRIPT, "c"],
        capture_output=True,
        text=True,
        env={**os.environ, "OPWEAVE_FLAGS": f"compiledir={tmp_path}"},
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr
    assert "RESULT 9.0" in proc.stdout
    assert "corrupt C cache entry" in proc.stderr and "rebuilding it" in proc.stderr
    (rebuilt,) = ModuleCache(tmp_path).entries()
    assert rebuilt.library.read_bytes() != data[: len(data) // 2]


def test_corrupt_metadata_is_detected_in_process(tmp_path) -> None:
    cache = ModuleCache(tmp_path)

    def build(tmp: Path) -> dict:
        (tmp / "lib.so").write_bytes(b"not really a library")
        return {"library": "lib.so"}

    entry = cache.get_or_build("ab" * 32, build, "test entry")
    assert cache.lookup(entry.key) is not None
    (entry.path / "meta.json").write_text("{ truncated")
    with pytest.warns(CorruptEntryWarning, match="corrupt C cache entry"):
        assert cache.lookup(entry.key) is None
    assert not entry.path.exists()


def test_unversioned_code_is_never_reused_by_another_process(tmp_path) -> None:
    out, builds = run_compile(tmp_path, "unversioned")
    assert "RESULT -2.0" in out and builds == 1
    assert ModuleCache(tmp_path).entries() == []
    out, builds = run_compile(tmp_path, "unversioned")
    assert "RESULT -2.0" in out and builds == 1  # built again, not loaded
    assert list((tmp_path / "tmp").iterdir()) == []  # and nothing left behind


def test_interrupted_build_leaves_nothing_that_breaks_the_next_run(tmp_path) -> None:
    cache = ModuleCache(tmp_path)

    def interrupted(tmp: Path) -> dict:
        (tmp / "half.c").write_text("int half(")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        cache.get_or_build("cd" * 32, interrupted, "interrupted build")
    assert cache.entries() == [] and list((tmp_path / "tmp").iterdir()) == []
    out, builds = run_compile(tmp_path)
    assert "RESULT 9.0" in out and builds == 1


class BrokenOp(gof.Op):
    __props__ = ()

    def make_node(self, x):
        return gof.Apply(self, [x], [x.type()])

    def c_code(self, node, name, inputs, outputs, sub):
        return f"{outputs[0]} = {inputs[0]} +* ;  /* deliberately invalid */"

    def c_code_cache_version(self):
        return (1,)


def test_compiler_error_names_the_node_and_keeps_the_source() -> None:
    from opweave_double import double

    x = double("x")
    with pytest.raises(CompilationError) as info:
        opweave.function([x], BrokenOp()(x), mode=Mode(linker="c"))
    msg = str(info.value)
    assert "BrokenOp(x)" in msg and "error" in msg and "Source kept at:" in msg
    source = Path(info.value.source_path)
    assert source.exists() and "deliberately invalid" in source.read_text()


def test_compiledir_is_private_and_refused_when_others_can_write(tmp_path) -> None:
    ModuleCache(tmp_path / "new")
    assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o700
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(CacheDirError, match="writable by group or others"):
        ModuleCache(shared)
    from opweave_double import add, double

    x = double("x")
    with opweave.config.change_flags(compiledir=str(shared)), warnings.catch_warnings():
        with pytest.raises(CacheDirError, match="chmod go-w"):
            opweave.function([x], add(x, x), mode=Mode(linker="c"))


def test_cache_command_lists_and_clears(tmp_path) -> None:
    run_compile(tmp_path)
    env = {**os.environ, "OPWEAVE_FLAGS": f"compiledir={tmp_path}"}
    listing = subprocess.run(
        [sys.executable, "-m", "opweave_c", "cache", "list"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout
    assert "1 cached modules" in listing and "graph FunctionGraph" in listing
    cleared = subprocess.run(
        [sys.executable, "-m", "opweave_c", "cache", "clear"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout
    assert "removed 1 cached modules" in cleared
    assert ModuleCache(tmp_path).entries() == []
