"""The runtime compiled once per compile directory (``opweave_c.prelude``): a precompiled
header and an object file, built in the background when a large graph's compile chooses a
C linker or once a module has been built without them, used by the modules built with
their flags, and never a reason for a module to compute differently, to change its cache
key or to load a file another user could have written."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
import opweave_c.compiler as compiler_module
import opweave_c.module as module
from opweave.compile import Mode
from opweave.graph.fg import FunctionGraph
from opweave_c.cache import CorruptEntryWarning, ModuleCache
from opweave_c.compiler import CCompiler
from opweave_c.module import (
    LINKED_DEFINE,
    RUNTIME,
    runtime_object_source,
    start_runtime_prelude,
)
from opweave_c.prelude import (
    HEADER_NAME,
    NEARLY_DONE,
    OBJECT_NAME,
    OBJECT_SOURCE_NAME,
    WAIT_SECONDS,
    include_args,
    object_pending,
    own_module_flags,
    prelude_dir,
    runtime_object,
    settle_build,
    start_precompiling,
    wait_for_object,
)
from opweave_double import add, double

pytestmark = pytest.mark.skipif(
    not CCompiler.from_config().is_gcc, reason="precompiled headers are built with GCC only"
)


@pytest.fixture
def compiledir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh compile directory, the header built in the background on any machine."""
    monkeypatch.setattr(module, "HEADER_MIN_CORES", 1)
    with opweave.config.change_flags(compiledir=str(tmp_path / "cd")):
        yield tmp_path / "cd"


def _folder(root: Path) -> Path:
    return prelude_dir(
        root, CCompiler.from_config(), own_module_flags(), [], runtime_object_source()
    )


def _built(folder: Path, seconds: float = 30.0) -> Path:
    """The precompiled header, once the background build has put it and the runtime's
    object in place."""
    gch, obj = folder / (HEADER_NAME + ".gch"), folder / OBJECT_NAME
    deadline = time.monotonic() + seconds
    while not (gch.exists() and obj.exists()) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert gch.exists() and obj.exists(), f"not built in {folder}: {sorted(os.listdir(folder))}"
    while (folder / ".building").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    return gch


class Builds(list):  # type: ignore[type-arg]
    """The compile arguments of every module build; ``objects``: the object files each
    was linked with (for a module compiled on its own, ``-c``, those of the link that
    followed); ``beside``: whether each compiled on its own, beside the runtime's object."""

    objects: list[list[str]]
    beside: list[bool]

    def clear(self) -> None:
        super().clear()
        self.objects.clear()
        self.beside.clear()


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> Builds:
    seen = Builds()
    seen.objects = []
    seen.beside = []
    real_build = compiler_module.CCompiler.build
    real_link = compiler_module.CCompiler.link

    def build(self: CCompiler, *args: Any, **kwargs: Any) -> None:
        seen.append(list(kwargs["compile_args"]))
        seen.objects.append(list(kwargs.get("objects") or []))
        seen.beside.append(bool(kwargs.get("compile_only")))
        real_build(self, *args, **kwargs)

    def link(self: CCompiler, objects: list[str], *args: Any, **kwargs: Any) -> None:
        seen.objects[-1] = list(objects[1:])  # after the module's own object
        real_link(self, objects, *args, **kwargs)

    monkeypatch.setattr(compiler_module.CCompiler, "build", build)
    monkeypatch.setattr(compiler_module.CCompiler, "link", link)
    return seen


#: Elementwise functions, opweave's and NumPy's: each gives a graph whose module is new.
FUNCTIONS = {
    "tanh": np.tanh,
    "sin": np.sin,
    "cos": np.cos,
    "arctan": np.arctan,
    "sinh": np.sinh,
    "expm1": np.expm1,
    "arcsinh": np.arcsinh,
    "tan": np.tan,
    "cosh": np.cosh,
    "exp": np.exp,
}


def _compile(name: str, linker: str = "cvm") -> Any:
    x = ot.dvector("x")
    f = getattr(ot, name)
    return opweave.function([x], f(x * 1.5) + ot.mean(x), mode=Mode(linker=linker))


def _expected(name: str, x: np.ndarray) -> np.ndarray:
    return FUNCTIONS[name](x * 1.5) + x.mean()


X = np.linspace(-1.0, 1.0, 7)


@pytest.mark.parametrize("linker", ["cvm", "c"])
def test_the_header_and_object_once_built_are_used_by_later_modules(
    compiledir: Path, builds: Builds, linker: str
) -> None:
    first = _compile("tanh", linker)
    np.testing.assert_allclose(first(X), _expected("tanh", X))
    # The first module of the compile directory starts the runtime's build, compiles its
    # own code beside the object's and links the two; the header comes after.
    folder = _folder(compiledir)
    assert builds and not any("-include" in args for args in builds)
    assert builds.beside == [True] * len(builds)
    assert all(LINKED_DEFINE in args for args in builds)
    assert all(objects == [str(folder / OBJECT_NAME)] for objects in builds.objects)
    gch = _built(folder)
    assert (folder / HEADER_NAME).read_text() == RUNTIME
    assert (folder / OBJECT_SOURCE_NAME).read_text() == runtime_object_source()
    files = [HEADER_NAME, HEADER_NAME + ".gch", OBJECT_SOURCE_NAME, OBJECT_NAME]
    for path in (folder.parent, folder, *(folder / name for name in files)):
        assert os.lstat(path).st_mode & 0o077 == 0, path  # private to the user
    assert sorted(os.listdir(folder)) == sorted(files)
    assert gch.stat().st_size > 0 and runtime_object(folder) == folder / OBJECT_NAME
    builds.clear()
    second = _compile("sin", linker)  # another module to build
    np.testing.assert_allclose(second(X), _expected("sin", X))
    assert builds
    for args, objects in zip(builds, builds.objects, strict=True):
        assert args[:3] == ["-include", str(folder / HEADER_NAME), LINKED_DEFINE]
        assert objects == [str(folder / OBJECT_NAME)]
    # The runtime's functions now come from the object: the input checks, the filter they
    # call for other values, and its messages.
    with pytest.raises(TypeError, match=r"cannot hold None"):
        second(None)
    with pytest.raises(TypeError, match=r"expected 1 dimension\(s\), got a value with 2"):
        second(np.ones((2, 2)))
    ints = np.arange(3)
    np.testing.assert_allclose(second(ints), _expected("sin", ints.astype(float)))
    np.testing.assert_allclose(second(X[::2]), _expected("sin", X[::2]))
    # Reductions plan their loops with the object's functions; the argmax and the shape
    # alone (no elementwise loop in their modules) link with it too.
    builds.clear()
    m = ot.dmatrix("m")
    reductions = opweave.function(
        [m], [ot.max(m, axis=0), ot.argmax(m, axis=0), m.shape[1]], mode=Mode(linker=linker)
    )
    value = np.random.default_rng(0).normal(size=(5, 3))
    got = reductions(value)
    np.testing.assert_allclose(got[0], value.max(axis=0))
    np.testing.assert_array_equal(got[1], value.argmax(axis=0))
    assert int(got[2]) == 3
    assert builds and all(objects == [str(folder / OBJECT_NAME)] for objects in builds.objects)


WITHOUT_HEADER = """
import sys
import numpy as np
import opweave, opweave.tensor as ot
from opweave.compile import Mode
x = ot.dvector("x")
f = opweave.function([x], ot.cos(x * 1.5) + ot.mean(x), mode=Mode(linker="cvm"))
np.save(sys.argv[1], f(np.linspace(-1.0, 1.0, 7)))
"""


def test_header_and_object_change_neither_the_cache_key_nor_the_values(
    tmp_path: Path, builds: Builds, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same graph built with the header and object here, and in another process where
    neither can be made (``prelude`` is a file), lands in the same cache entry with the
    same values."""
    with_header, without = tmp_path / "with", tmp_path / "without"
    monkeypatch.setattr(module, "HEADER_MIN_CORES", 1)
    with opweave.config.change_flags(compiledir=str(with_header)):
        start_runtime_prelude()
        _built(_folder(with_header))
        here = _compile("cos")(X)
    assert builds and all("-include" in args for args in builds) and all(builds.objects)
    without.mkdir()
    (without / "prelude").write_text("not a directory")
    script = tmp_path / "without.py"
    script.write_text(WITHOUT_HEADER)
    env = {**os.environ, "OPWEAVE_FLAGS": f"compiledir={without}"}
    subprocess.run([sys.executable, str(script), str(tmp_path / "there.npy")], env=env, check=True)
    there = np.load(tmp_path / "there.npy")
    # (the other process also builds modules this one had loaded before)
    built_here = {p.name for p in (with_header / "c").glob("*/*")}
    assert built_here and built_here <= {p.name for p in (without / "c").glob("*/*")}
    np.testing.assert_array_equal(here, there)


def test_an_unsafe_or_damaged_header_is_not_a_problem(compiledir: Path, builds: Builds) -> None:
    start_runtime_prelude()
    folder = _folder(compiledir)
    gch = _built(folder)
    os.chmod(gch, 0o620)  # group-writable: another user could have written it
    assert include_args(folder) == []
    f = _compile("arctan")
    assert builds and not any("-include" in args for args in builds)
    np.testing.assert_allclose(f(X), _expected("arctan", X))
    # A precompiled form GCC cannot use: it parses the header's text instead.
    os.chmod(gch, 0o600)
    gch.write_bytes(b"not a precompiled header")
    builds.clear()
    g = _compile("sinh")
    assert builds and all("-include" in args for args in builds)
    np.testing.assert_allclose(g(X), _expected("sinh", X))


def test_an_unsafe_object_is_not_linked(compiledir: Path, builds: Builds) -> None:
    start_runtime_prelude()
    folder = _folder(compiledir)
    _built(folder)
    os.chmod(folder / OBJECT_NAME, 0o660)  # group-writable: another user could have written it
    assert runtime_object(folder) is None
    f = _compile("expm1")
    np.testing.assert_allclose(f(X), _expected("expm1", X))
    # The module starts the runtime's build again, which replaces the unsafe file with one
    # of its own, and links that one.
    assert builds and builds.beside == [True] * len(builds)
    assert all(objects == [str(folder / OBJECT_NAME)] for objects in builds.objects)
    assert os.lstat(folder / OBJECT_NAME).st_mode & 0o077 == 0
    assert runtime_object(folder) == folder / OBJECT_NAME


def test_a_damaged_object_is_dropped_and_the_module_built_without_it(
    compiledir: Path, builds: Builds
) -> None:
    start_runtime_prelude()
    folder = _folder(compiledir)
    _built(folder)
    (folder / OBJECT_NAME).write_bytes(b"not an object file")
    with pytest.warns(CorruptEntryWarning, match="runtime object .* could not be linked"):
        f = _compile("arcsinh")
    assert [bool(objects) for objects in builds.objects] == [True, False]
    assert LINKED_DEFINE in builds[0] and LINKED_DEFINE not in builds[1]
    np.testing.assert_allclose(f(X), _expected("arcsinh", X))
    assert not (folder / OBJECT_NAME).exists()
    # The next large compile builds it again.
    start_runtime_prelude()
    _built(folder)
    assert runtime_object(folder) == folder / OBJECT_NAME


def test_a_damaged_object_found_beside_is_dropped_and_the_module_built_whole(
    compiledir: Path, builds: Builds, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A module compiled beside the object's build that then cannot link the object it
    finds builds whole, as one that finds it before its build does."""
    folder = _folder(compiledir)
    folder.mkdir(parents=True, mode=0o700)
    os.chmod(folder.parent, 0o700)
    damaged = folder / OBJECT_NAME
    damaged.write_bytes(b"not an object file")
    os.chmod(damaged, 0o600)
    monkeypatch.setattr(module, "start_precompiling", lambda *args, **kwargs: False)
    monkeypatch.setattr(module, "object_pending", lambda folder: True)
    monkeypatch.setattr(module, "wait_for_object", lambda folder, seconds: damaged)
    monkeypatch.setattr(module, "runtime_object", lambda folder: None)
    with pytest.warns(CorruptEntryWarning, match="runtime object .* could not be linked"):
        f = _compile("cosh", linker="c")
    assert builds.beside == [True, False]
    assert LINKED_DEFINE in builds[0] and LINKED_DEFINE not in builds[1]
    np.testing.assert_allclose(f(X), _expected("cosh", X))
    assert not damaged.exists()


def test_with_few_cores_only_the_object_is_built(
    compiledir: Path, builds: Builds, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Below ``HEADER_MIN_CORES`` the background build makes the object alone: modules link
    it and parse the header's text."""
    monkeypatch.setattr(module, "HEADER_MIN_CORES", module.usable_cores() + 1)
    start_runtime_prelude()
    folder = _folder(compiledir)
    deadline = time.monotonic() + 30
    while (folder / ".building").exists() or not (folder / OBJECT_NAME).exists():
        assert time.monotonic() < deadline, sorted(os.listdir(folder))
        time.sleep(0.02)
    assert not (folder / (HEADER_NAME + ".gch")).exists() and include_args(folder) == []
    f = _compile("tan")
    assert builds and all(objects == [str(folder / OBJECT_NAME)] for objects in builds.objects)
    assert not any("-include" in args for args in builds)
    np.testing.assert_allclose(f(X), _expected("tan", X))
    # A later large compile on more cores adds the header to the object it finds.
    monkeypatch.setattr(module, "HEADER_MIN_CORES", 1)
    start_runtime_prelude()
    _built(folder)
    assert include_args(folder) == ["-include", str(folder / HEADER_NAME)]


def test_the_first_module_compiles_beside_the_object_and_later_ones_link_it(
    compiledir: Path, builds: Builds, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first module of a compile directory starts the runtime's object (with few
    cores, the object alone), compiles its own code meanwhile and links the two; the next
    new graph's module links the object in one build."""
    monkeypatch.setattr(module, "HEADER_MIN_CORES", module.usable_cores() + 1)
    folder = _folder(compiledir)
    first = _compile("cosh")
    assert builds and builds.beside == [True] * len(builds)
    assert all(objects == [str(folder / OBJECT_NAME)] for objects in builds.objects)
    deadline = time.monotonic() + 30
    while (folder / ".building").exists():
        assert time.monotonic() < deadline, sorted(os.listdir(folder))
        time.sleep(0.02)
    assert not (folder / (HEADER_NAME + ".gch")).exists()
    builds.clear()
    second = _compile("exp")  # the object is there: one build, linked with it
    assert builds and builds.beside == [False] * len(builds)
    assert all(objects == [str(folder / OBJECT_NAME)] for objects in builds.objects)
    assert all(LINKED_DEFINE in args for args in builds)
    np.testing.assert_allclose(first(X), _expected("cosh", X))
    np.testing.assert_allclose(second(X), _expected("exp", X))


def test_one_build_at_a_time_and_none_for_another_compiler(tmp_path: Path) -> None:
    cache = ModuleCache(tmp_path)
    gcc, flags = CCompiler.from_config(), own_module_flags()
    folder = prelude_dir(cache.root, gcc, flags, [], runtime_object_source())
    args = (folder, gcc, flags, [], RUNTIME, runtime_object_source())
    assert start_precompiling(*args) is True
    assert start_precompiling(*args) is False  # one is running
    _built(folder)
    assert start_precompiling(*args) is False  # built
    other = CCompiler("definitely-not-a-compiler")
    folder = prelude_dir(cache.root, other, flags, [], runtime_object_source())
    assert start_precompiling(folder, other, *args[2:]) is False
    assert not folder.exists()


def _put_later(path: Path, delay: float = 0.05) -> threading.Thread:
    def put() -> None:
        time.sleep(delay)
        path.write_bytes(b"x")
        os.chmod(path, 0o600)

    thread = threading.Thread(target=put)
    thread.start()
    return thread


def _age(path: Path, seconds: float) -> None:
    past = time.time() - seconds
    os.utime(path, (past, past))


def test_the_object_is_waited_for_before_the_link_a_nearly_done_header_before_the_build(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "prelude" / "k"
    folder.mkdir(parents=True, mode=0o700)
    os.chmod(folder.parent, 0o700)
    (folder / HEADER_NAME).write_text("/* header */\n")
    os.chmod(folder / HEADER_NAME, 0o600)
    marker = folder / ".building"
    marker.touch(mode=0o600)
    # The object's step: not waited for before a module's build, which compiles beside it
    # and waits for it before its link.
    _age(marker, 1.0)
    started = time.monotonic()
    settle_build(folder)
    assert time.monotonic() - started < 0.5
    assert marker.exists() and object_pending(folder)
    putting = _put_later(folder / OBJECT_NAME, delay=0.2)
    started = time.monotonic()
    assert wait_for_object(folder, 5.0) == folder / OBJECT_NAME
    putting.join()
    assert 0.15 < time.monotonic() - started < 4.0
    assert not object_pending(folder)
    # The header's step nearly done (counted from when the build touched its marker to
    # start it): waited for.
    _age(marker, NEARLY_DONE["header"] + 0.01)
    putting = _put_later(folder / (HEADER_NAME + ".gch"), delay=WAIT_SECONDS["header"] / 4)
    started = time.monotonic()
    settle_build(folder)
    putting.join()
    assert time.monotonic() - started < 0.9
    assert include_args(folder) == ["-include", str(folder / HEADER_NAME)]
    # A marker left by a build that died is neither waited for nor acted on.
    (folder / (HEADER_NAME + ".gch")).unlink()
    _age(marker, 1000.0)
    started = time.monotonic()
    settle_build(folder)
    assert time.monotonic() - started < 0.5 and marker.exists()


def test_waiting_for_the_object_ends_with_its_build(tmp_path: Path) -> None:
    """A build that ends without the object (failed, stopped) or outlives the wait gives
    ``None`` at once: the module is then built whole."""
    folder = tmp_path / "prelude" / "k"
    folder.mkdir(parents=True, mode=0o700)
    os.chmod(folder.parent, 0o700)
    marker = folder / ".building"
    assert not object_pending(folder) and wait_for_object(folder, 5.0) is None
    marker.touch(mode=0o600)
    started = time.monotonic()
    assert wait_for_object(folder, 0.2) is None  # still running after the wait
    assert 0.2 <= time.monotonic() - started < 2.0
    ending = threading.Timer(0.1, marker.unlink)
    ending.start()
    started = time.monotonic()
    assert wait_for_object(folder, 5.0) is None  # ended without the object
    ending.join()
    assert time.monotonic() - started < 2.0
    marker.touch(mode=0o600)
    _age(marker, 1000.0)  # a build that died
    assert not object_pending(folder) and wait_for_object(folder, 5.0) is None


def test_a_header_step_far_from_done_is_stopped(tmp_path: Path) -> None:
    """A module build about to start stops a precompiled header's build that would not end
    soon: it would only slow the module builds down."""
    folder = tmp_path / "prelude" / "k"
    folder.mkdir(parents=True, mode=0o700)
    os.chmod(folder.parent, 0o700)
    (folder / OBJECT_NAME).write_bytes(b"x")  # the object's step is over
    os.chmod(folder / OBJECT_NAME, 0o600)
    (folder / ".gch-partial").write_bytes(b"half a header")
    # What the build script runs, in a process group of its own, its number in the marker.
    script = f'echo $$ > "{folder / ".building"}"; sleep 30 & wait'
    build = subprocess.Popen(["sh", "-c", script], start_new_session=True)
    marker, deadline = folder / ".building", time.monotonic() + 10
    while not (marker.exists() and marker.read_text().strip()):
        assert time.monotonic() < deadline
        time.sleep(0.01)
    settle_build(folder)
    assert build.wait(timeout=10) != 0  # stopped, with its child
    assert not (folder / ".building").exists() and not (folder / ".gch-partial").exists()
    assert runtime_object(folder) == folder / OBJECT_NAME  # what was done stays


def test_clearing_the_cache_removes_the_header_and_object(compiledir: Path) -> None:
    start_runtime_prelude()
    _built(_folder(compiledir))
    ModuleCache(compiledir).clear()
    assert not (compiledir / "prelude").exists()


def test_any_graph_starts_the_object_before_it_is_rewritten(compiledir: Path) -> None:
    x = ot.dvector("x")
    start_runtime_prelude(FunctionGraph([x], [x]))  # no node: nothing to compile
    assert not (compiledir / "prelude").exists()
    a, b = double("a"), double("b")
    start_runtime_prelude(FunctionGraph([a, b], [add(a, b)]))  # a plugin's Ops alone
    assert not (compiledir / "prelude").exists()
    start_runtime_prelude(FunctionGraph([x], [ot.exp(x)]))
    _built(_folder(compiledir))


def test_a_built_object_is_found_without_setting_up_the_compile_directory(
    compiledir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    start_runtime_prelude()
    _built(_folder(compiledir))

    def unexpected() -> None:
        raise AssertionError("the compile directory was set up again")

    monkeypatch.setattr(module, "cache_for_config", unexpected)
    monkeypatch.setattr(module, "_too_few_for_header", lambda: True)
    start_runtime_prelude()  # the object is there; no header is wanted with few cores
