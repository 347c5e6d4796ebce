"""The precompiled runtime header (``opweave_c.prelude``): built in the background when a
compile chooses a C linker, used by the modules built with its flags, and never a reason
for a module to build differently or to load a file another user could have written."""

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
from opweave.compile import Mode
from opweave.graph.fg import FunctionGraph
from opweave_c.cache import ModuleCache
from opweave_c.compiler import CCompiler
from opweave_c.module import PRELUDE_EARLY_NODES, RUNTIME, start_runtime_prelude
from opweave_c.prelude import (
    HEADER_NAME,
    NEARLY_DONE,
    include_args,
    own_module_flags,
    prelude_dir,
    start_precompiling,
)

pytestmark = pytest.mark.skipif(
    not CCompiler.from_config().is_gcc, reason="precompiled headers are built with GCC only"
)


@pytest.fixture
def compiledir(tmp_path: Path) -> Iterator[Path]:
    with opweave.config.change_flags(compiledir=str(tmp_path / "cd")):
        yield tmp_path / "cd"


def _folder(root: Path) -> Path:
    return prelude_dir(root, CCompiler.from_config(), own_module_flags(), [], RUNTIME)


def _built(folder: Path, seconds: float = 30.0) -> Path:
    """The precompiled header, once the background build has put it in place."""
    gch = folder / (HEADER_NAME + ".gch")
    deadline = time.monotonic() + seconds
    while not gch.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert gch.exists(), f"no precompiled header in {folder}: {sorted(os.listdir(folder))}"
    while (folder / ".building").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    return gch


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The compile arguments of every module build."""
    seen: list[list[str]] = []
    real = compiler_module.CCompiler.build

    def build(self: CCompiler, *args: Any, **kwargs: Any) -> None:
        seen.append(list(kwargs["compile_args"]))
        real(self, *args, **kwargs)

    monkeypatch.setattr(compiler_module.CCompiler, "build", build)
    return seen


#: Elementwise functions, opweave's and NumPy's: each gives a graph whose module is new.
FUNCTIONS = {"tanh": np.tanh, "sin": np.sin, "cos": np.cos, "arctan": np.arctan, "sinh": np.sinh}


def _compile(name: str, linker: str = "cvm") -> Any:
    x = ot.dvector("x")
    f = getattr(ot, name)
    return opweave.function([x], f(x * 1.5) + ot.mean(x), mode=Mode(linker=linker))


def _expected(name: str, x: np.ndarray) -> np.ndarray:
    return FUNCTIONS[name](x * 1.5) + x.mean()


X = np.linspace(-1.0, 1.0, 7)


@pytest.mark.parametrize("linker", ["cvm", "c"])
def test_the_header_once_built_is_included_by_later_modules(
    compiledir: Path, builds: list[list[str]], linker: str
) -> None:
    first = _compile("tanh", linker)
    np.testing.assert_allclose(first(X), _expected("tanh", X))
    # A small graph builds its module from the text and does not start the header.
    assert builds and not any("-include" in args for args in builds)
    assert not (compiledir / "prelude").exists()
    start_runtime_prelude()  # what a large graph's compile starts
    folder = _folder(compiledir)
    gch = _built(folder)
    assert (folder / HEADER_NAME).read_text() == RUNTIME
    for path in (folder.parent, folder, folder / HEADER_NAME, gch):
        assert os.lstat(path).st_mode & 0o077 == 0, path  # private to the user
    assert sorted(os.listdir(folder)) == [HEADER_NAME, HEADER_NAME + ".gch"]
    builds.clear()
    second = _compile("sin", linker)  # another module to build
    np.testing.assert_allclose(second(X), _expected("sin", X))
    assert builds and all(args[:2] == ["-include", str(folder / HEADER_NAME)] for args in builds)


WITHOUT_HEADER = """
import sys
import numpy as np
import opweave, opweave.tensor as ot
from opweave.compile import Mode
x = ot.dvector("x")
f = opweave.function([x], ot.cos(x * 1.5) + ot.mean(x), mode=Mode(linker="cvm"))
np.save(sys.argv[1], f(np.linspace(-1.0, 1.0, 7)))
"""


def test_the_header_changes_neither_the_cache_key_nor_the_values(
    tmp_path: Path, builds: list[list[str]]
) -> None:
    """The same graph built with the header here, and in another process where no header
    can be made (``prelude`` is a file), lands in the same cache entry with the same
    values."""
    with_header, without = tmp_path / "with", tmp_path / "without"
    with opweave.config.change_flags(compiledir=str(with_header)):
        start_runtime_prelude()
        _built(_folder(with_header))
        here = _compile("cos")(X)
    assert builds and all("-include" in args for args in builds)
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


def test_an_unsafe_or_damaged_header_is_not_a_problem(
    compiledir: Path, builds: list[list[str]]
) -> None:
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


def test_one_build_at_a_time_and_none_for_another_compiler(tmp_path: Path) -> None:
    cache = ModuleCache(tmp_path)
    gcc, flags = CCompiler.from_config(), own_module_flags()
    folder = prelude_dir(cache.root, gcc, flags, [], RUNTIME)
    args = (folder, gcc, flags, [], RUNTIME)
    assert start_precompiling(*args) is True
    assert start_precompiling(*args) is False  # one is running
    _built(folder)
    assert start_precompiling(*args) is False  # built
    other = CCompiler("definitely-not-a-compiler")
    folder = prelude_dir(cache.root, other, flags, [], RUNTIME)
    assert start_precompiling(folder, other, flags, [], RUNTIME) is False
    assert not folder.exists()


def test_a_build_nearly_done_is_waited_for_a_young_one_is_not(tmp_path: Path) -> None:
    folder = tmp_path / "prelude" / "k"
    folder.mkdir(parents=True, mode=0o700)
    os.chmod(folder.parent, 0o700)
    (folder / HEADER_NAME).write_text("/* header */\n")
    os.chmod(folder / HEADER_NAME, 0o600)
    marker = folder / ".building"
    marker.touch(mode=0o600)
    assert include_args(folder, wait=1.0) == []  # just started: not waited for

    def finish() -> None:
        time.sleep(0.05)
        gch = folder / (HEADER_NAME + ".gch")
        gch.write_bytes(b"x")
        os.chmod(gch, 0o600)

    past = time.time() - NEARLY_DONE - 0.01
    os.utime(marker, (past, past))
    threading.Thread(target=finish).start()
    started = time.monotonic()
    assert include_args(folder, wait=1.0) == ["-include", str(folder / HEADER_NAME)]
    assert time.monotonic() - started < 0.9


def test_clearing_the_cache_removes_the_header(compiledir: Path) -> None:
    start_runtime_prelude()
    _built(_folder(compiledir))
    ModuleCache(compiledir).clear()
    assert not (compiledir / "prelude").exists()


def test_only_a_large_graph_starts_the_header_before_it_is_rewritten(compiledir: Path) -> None:
    x = ot.dvector("x")
    small, e = x, x
    for _ in range(PRELUDE_EARLY_NODES // 2):
        e = ot.tanh(e) * 1.5
    start_runtime_prelude(FunctionGraph([x], [ot.exp(small)]))
    assert not (compiledir / "prelude").exists()
    large = FunctionGraph([x], [e])
    assert len(large.apply_nodes) >= PRELUDE_EARLY_NODES
    start_runtime_prelude(large)
    _built(_folder(compiledir))
