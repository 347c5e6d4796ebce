"""Threads loading the same compiled module: none may get it before its ``link_*``
functions are attached (:func:`opweave_c.module.load_module`).

A module enters ``sys.modules`` before its ``opw_install`` has run (the install looks it
up there); a thread that took it from there meanwhile got a module without its entry
points (``AttributeError: ... has no attribute 'link_opw_graph'``).
"""

from __future__ import annotations

import importlib.machinery
import os
import subprocess
import sys
import textwrap
import threading
import uuid
from pathlib import Path

import pytest

import opweave
from opweave import graph as gof
from opweave.compile import Mode
from opweave_c import module as c_module
from opweave_c.compiler import CCompiler


class Scale(gof.Op):
    """``x * factor`` on the tutorial's doubles; each factor is a module of its own."""

    __props__ = ("factor",)

    def __init__(self, factor: float) -> None:
        self.factor = factor

    def make_node(self, x):
        return gof.Apply(self, [x], [x.type()])

    def c_code(self, node, name, inputs, outputs, sub):
        return f"{outputs[0]} = {inputs[0]} * {self.factor!r};"

    def c_code_cache_version(self):
        return (1,)


def _unique_factor() -> float:
    """A factor no other test (nor an earlier run in this process) compiled."""
    return 1.0 + uuid.uuid4().int % 10**6 / 10**7


def _compile(factor: float):
    from opweave_double import double

    x = double("x")
    return opweave.function([x], Scale(factor)(x), mode=Mode(linker="c"))


@pytest.fixture
def compiledir(tmp_path: Path):
    with opweave.config.change_flags(compiledir=str(tmp_path / "compiledir")):
        yield tmp_path / "compiledir"


#: Compiles the graphs of the factors on its command line (warming the cache) and exits.
WARM = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, sys.argv[1])
    from test_loader_race import _compile
    for factor in sys.argv[2:]:
        assert _compile(float(factor))(1.0) == float(factor)
    """
)


def _warm(compiledir: Path, *factors: float) -> None:
    """Build the modules of ``factors`` into the cache in another process (this one has
    then never loaded them)."""
    subprocess.run(
        [sys.executable, "-c", WARM, str(Path(__file__).parent), *map(repr, factors)],
        check=True,
        timeout=240,
        env={**os.environ, "OPWEAVE_FLAGS": f"compiledir={compiledir}"},
    )


def _no_build(*args, **kwargs):
    raise AssertionError("the module was built again: the cache was not warm")


def test_threads_never_get_a_module_another_is_still_installing(
    compiledir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Four threads compile one graph whose module is in the cache. The first load of
    the module is held up between its entering ``sys.modules`` and its install; the
    other threads, started meanwhile, must wait and get the installed module, not the
    bare one."""
    factor = _unique_factor()
    _warm(compiledir, factor)
    real_exec = importlib.machinery.ExtensionFileLoader.exec_module
    inside, others_done = threading.Event(), threading.Event()
    loads: list[str] = []

    def held_exec(loader, module):
        if not module.__name__.startswith("opw_"):
            return real_exec(loader, module)
        loads.append(module.__name__)
        if len(loads) == 1:
            inside.set()
            others_done.wait(timeout=0.5)  # long enough for the others to look
        return real_exec(loader, module)

    monkeypatch.setattr(importlib.machinery.ExtensionFileLoader, "exec_module", held_exec)
    monkeypatch.setattr(CCompiler, "build", _no_build)
    results: dict[int, object] = {}

    def compile_into(n: int) -> None:
        try:
            results[n] = _compile(factor)(2.0)
        except Exception as exc:  # handed to the test's thread
            results[n] = exc

    first = threading.Thread(target=compile_into, args=(0,))
    first.start()
    assert inside.wait(timeout=120), "the first compile never loaded its module"
    others = [threading.Thread(target=compile_into, args=(n,)) for n in (1, 2, 3)]
    for thread in others:
        thread.start()
    for thread in others:
        thread.join(timeout=120)
    others_done.set()
    first.join(timeout=120)
    assert results == dict.fromkeys(range(4), 2.0 * factor)
    assert len(loads) == 1  # one module, loaded by one of them


def test_the_load_lock_is_a_fresh_one_in_a_forked_child() -> None:
    """A child forked while another thread of the parent holds the load lock can still
    load modules."""
    if not hasattr(os, "fork"):
        pytest.skip("no os.fork here")
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with c_module._load_lock:
            held.set()
            release.wait(timeout=30)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(timeout=10)
        pid = os.fork()
        if pid == 0:  # the child: exit 0 only if the lock can be taken
            os._exit(0 if c_module._load_lock.acquire(timeout=5) else 1)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    finally:
        release.set()
        holder.join()
