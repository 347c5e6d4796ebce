"""The C compiler's runs end with the process that started them, and a module's source
that cannot be written says where and what (:mod:`opweave_c.compiler`,
:func:`opweave_c.module.write_c_source`)."""

from __future__ import annotations

import builtins
import errno
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from pathlib import Path

import pytest

import opweave
from opweave import graph as gof
from opweave.compile import Mode
from opweave_c.cache import ModuleCache
from opweave_c.compiler import run_tied

posix_only = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="reads process states from /proc"
)


class Offset(gof.Op):
    """``x + offset`` on the tutorial's doubles; each offset is a module of its own."""

    __props__ = ("offset",)

    def __init__(self, offset: float) -> None:
        self.offset = offset

    def make_node(self, x):
        return gof.Apply(self, [x], [x.type()])

    def c_code(self, node, name, inputs, outputs, sub):
        return f"{outputs[0]} = {inputs[0]} + {self.offset!r};"

    def c_code_cache_version(self):
        return (1,)


def _unique_offset() -> float:
    return 1.0 + uuid.uuid4().int % 10**6 / 10**7


# --------------------------------------------------------------- the source on a full disk


class _FullDiskFile:
    """A file being written on a full disk: every write fails."""

    def __init__(self, fh) -> None:
        self._fh = fh

    def write(self, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def __getattr__(self, name):
        return getattr(self._fh, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._fh.close()


def test_a_full_disk_while_the_source_is_written_names_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from opweave_double import double

    compiledir = tmp_path / "compiledir"
    real_open = builtins.open

    def full_disk_open(file, mode="r", *args, **kwargs):
        fh = real_open(file, mode, *args, **kwargs)
        name = os.fspath(file) if isinstance(file, str | os.PathLike) else ""
        if "w" in mode and name.startswith(str(compiledir)) and ".c" in Path(name).suffixes[:1]:
            return _FullDiskFile(fh)
        return fh

    monkeypatch.setattr(builtins, "open", full_disk_open)
    x = double("x")
    with opweave.config.change_flags(compiledir=str(compiledir)):
        with pytest.raises(OSError) as info:
            opweave.function([x], Offset(_unique_offset())(x), mode=Mode(linker="c"))
    assert info.value.errno == errno.ENOSPC
    message = str(info.value)
    assert "cannot write the C source of graph" in message
    assert str(compiledir / "tmp") in message and ".c" in message
    assert "No space left on device" in message
    monkeypatch.undo()
    assert ModuleCache(compiledir).entries() == []
    assert list((compiledir / "tmp").iterdir()) == []  # nothing half written stays


# ------------------------------------------------------------- the compiler's lifetime


def _running(pid: int) -> bool:
    """Is ``pid`` a live process (a zombie no one reaps counts as gone)?"""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _wait_until_gone(pids: list[int], seconds: float = 20.0) -> list[int]:
    """The ``pids`` still running after at most ``seconds``."""
    deadline = time.monotonic() + seconds
    while any(_running(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [pid for pid in pids if _running(pid)]


def hanging_compiler(tmp_path: Path) -> tuple[Path, Path]:
    """A ``cc`` wrapper that, for a module's build (``-shared``), starts a long child as
    ``cc1`` would, writes its own pid and the child's into a file, and waits."""
    pids = tmp_path / "pids"
    wrapper = tmp_path / "cc-hangs"
    wrapper.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = --version ]; then exec cc --version; fi\n'
        'case " $* " in *" -shared "*) ;; *) exec cc "$@";; esac\n'
        "sleep 120 &\n"
        f'echo "$$ $!" > {pids}.tmp && mv {pids}.tmp {pids}\n'
        "wait\n"
    )
    wrapper.chmod(0o755)
    return wrapper, pids


#: Compiles a graph (in the compile directory and with the compiler of OPWEAVE_FLAGS).
COMPILE = textwrap.dedent(
    """
    import opweave
    from opweave.compile import Mode
    from opweave_double import add, double, mul

    x, y = double("x"), double("y")
    opweave.function([x, y], mul(add(x, y), x), mode=Mode(linker="c"))
    """
)


@posix_only
def test_killing_the_process_kills_its_compiler(tmp_path: Path) -> None:
    """``kill -9`` of a process while its compiler runs: the compiler, and what the
    compiler started, end too (they would run on for minutes on a large graph)."""
    cxx, pids_file = hanging_compiler(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-c", COMPILE],
        env={**os.environ, "OPWEAVE_FLAGS": f"compiledir={tmp_path / 'cd'},cxx={cxx}"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    pids: list[int] = []
    try:
        deadline = time.monotonic() + 120
        while not pids_file.exists():
            assert proc.poll() is None, "the compile ended before its compiler started"
            assert time.monotonic() < deadline
            time.sleep(0.02)
        pids = [int(word) for word in pids_file.read_text().split()]
        assert all(_running(pid) for pid in pids)
        os.kill(proc.pid, signal.SIGKILL)  # the Python process alone
        proc.wait()
        assert _wait_until_gone(pids) == []
    finally:
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


def test_run_tied_gives_the_status_and_the_output() -> None:
    done = run_tied(["sh", "-c", "echo out; echo err >&2; exit 3"])
    assert (done.returncode, done.stdout, done.stderr) == (3, "out\n", "err\n")


@posix_only
def test_an_interrupted_wait_kills_the_compiler(tmp_path: Path) -> None:
    """Ctrl-C while the compiler runs: the compiler (in a process group of its own, which
    the terminal's signal does not reach) is killed, with what it started."""
    pids_file = tmp_path / "pids"
    script = f'sleep 120 & echo "$$ $!" > {pids_file}.tmp && mv {pids_file}.tmp {pids_file}; wait'
    main = threading.main_thread().ident
    assert threading.get_ident() == main

    def interrupt() -> None:
        deadline = time.monotonic() + 30
        while not pids_file.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        signal.pthread_kill(main, signal.SIGINT)

    thread = threading.Thread(target=interrupt)
    thread.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            run_tied(["sh", "-c", script])
    finally:
        thread.join()
    pids = [int(word) for word in pids_file.read_text().split()]
    assert _wait_until_gone(pids) == []
