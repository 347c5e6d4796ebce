"""What another user can do through the compile directory, and cannot any more: have a
compile signal a process of their choosing through the runtime build's marker, swap a
directory above the compile directory, and turn a checked entry into a module that will
not load in the process that found it.

The tests run as root here and in CI: "another user" is a file ``os.chown``-ed to
:data:`OTHER_UID`.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

import opweave
from opweave_c.cache import ModuleCache, ensure_private_dir
from opweave_c.errors import CacheDirError
from opweave_c.prelude import OBJECT_NAME, settle_build

#: A uid that is neither ours nor root's.
OTHER_UID = 12345

needs_chown = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown to another uid needs root"
)


# ------------------------------------------------------------- the runtime build's marker


@pytest.fixture
def victim() -> Iterator[subprocess.Popen]:
    """A process group of ours that is no build: what a planted marker would name."""
    proc = subprocess.Popen(["sleep", "60"], start_new_session=True)
    yield proc
    proc.kill()
    proc.wait()


def _header_step_running(tmp_path: Path, group: int) -> Path:
    """A runtime folder whose marker says a header's build runs in process group
    ``group`` (and has just started: far from done, so a module build stops it)."""
    folder = tmp_path / "prelude" / "k"
    folder.mkdir(parents=True, mode=0o700)
    os.chmod(folder.parent, 0o700)
    (folder / OBJECT_NAME).write_bytes(b"x")
    os.chmod(folder / OBJECT_NAME, 0o600)
    marker = folder / ".building"
    marker.write_text(f"{group}\n")
    os.chmod(marker, 0o600)
    return marker


def _still_running(proc: subprocess.Popen) -> bool:
    try:
        proc.wait(timeout=0.3)
    except subprocess.TimeoutExpired:
        return True
    return False


def test_a_marker_naming_a_group_that_is_no_build_signals_nothing(
    tmp_path: Path, victim: subprocess.Popen
) -> None:
    marker = _header_step_running(tmp_path, victim.pid)
    settle_build(marker.parent)
    assert _still_running(victim)
    assert marker.exists()  # not ours to remove either


@needs_chown
def test_a_marker_another_user_wrote_signals_nothing(
    tmp_path: Path, victim: subprocess.Popen
) -> None:
    """Even naming a real build of ours: the marker could say anything."""
    build_marker = tmp_path / "mine" / ".building"
    build_marker.parent.mkdir()
    # A process of ours that names the marker in its command line, as a build does.
    build = subprocess.Popen(
        ["sh", "-c", f'sleep 60; : "{tmp_path / "prelude" / "k" / ".building"}"'],
        start_new_session=True,
    )
    try:
        marker = _header_step_running(tmp_path, build.pid)
        os.chown(marker, OTHER_UID, OTHER_UID)
        settle_build(marker.parent)
        assert _still_running(build)
        os.chown(marker, os.geteuid(), os.getegid())
        os.chmod(marker, 0o666)  # others could have written it
        settle_build(marker.parent)
        assert _still_running(build)
        os.chmod(marker, 0o600)  # now it is the build's own marker: stopped
        settle_build(marker.parent)
        assert build.wait(timeout=10) != 0
        assert not marker.exists()
    finally:
        build.kill()
        build.wait()
    assert _still_running(victim)


# ------------------------------------------------------- directories above the cache


@needs_chown
@pytest.mark.filterwarnings("ignore::opweave.compile.rewrite_cache.UnsafeRewriteCacheWarning")
@pytest.mark.parametrize(
    "damage",
    ["writable by others", "owned by another user", "a link owned by another user"],
)
def test_a_directory_above_the_compiledir_another_user_controls_is_refused(
    tmp_path: Path, damage: str
) -> None:
    parent = tmp_path / "parent"
    parent.mkdir(mode=0o755)
    compiledir = parent / "compiledir"
    ensure_private_dir(compiledir)
    if damage == "writable by others":
        parent.chmod(0o777)
    elif damage == "owned by another user":
        os.chown(parent, OTHER_UID, OTHER_UID)
    else:
        link = tmp_path / "link"
        link.symlink_to(parent)
        os.chown(link, OTHER_UID, OTHER_UID, follow_symlinks=False)
        compiledir = link / "compiledir"
    with pytest.raises(CacheDirError, match=r"(?s)above .*another user could plant"):
        ModuleCache(compiledir)
    with opweave.config.change_flags(compiledir=str(compiledir)):
        from opweave.compile import Mode
        from opweave_double import add, double

        x = double("x")
        with pytest.raises(CacheDirError):
            opweave.function([x], add(x, x), mode=Mode(linker="c"))


def test_a_sticky_directory_above_the_compiledir_is_accepted(tmp_path: Path) -> None:
    """As ``/tmp``: others may create entries there but not rename ours."""
    parent = tmp_path / "shared-tmp"
    parent.mkdir()
    parent.chmod(0o1777)
    cache = ModuleCache(parent / "compiledir")
    assert (cache.root / "c").is_dir()


# ------------------------------------------- a valid module of another graph in an entry


#: Compiles the graphs named on its command line, prints ``RESULT <name> <value>`` each.
SCRIPT = textwrap.dedent(
    """
    import sys
    import opweave
    from opweave.compile import Mode
    from opweave_double import add, double, mul

    x, y, z = double("x"), double("y"), double("z")
    graphs = {"tutorial": mul(add(x, y), z), "other": add(mul(x, y), z)}
    for name in sys.argv[1:]:
        f = opweave.function([x, y, z], graphs[name], mode=Mode(linker="c"))
        print("RESULT", name, f(1.0, 2.0, 3.0), flush=True)
    """
)


def _compile_in(compiledir: Path, *graphs: str) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, "-W", "always", "-c", SCRIPT, *graphs],
        capture_output=True,
        text=True,
        env={**os.environ, "OPWEAVE_FLAGS": f"compiledir={compiledir}"},
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr
    return proc


def test_a_valid_module_of_another_graph_in_an_entry_is_rebuilt_and_loaded(
    tmp_path: Path,
) -> None:
    """The shared object of graph "other", with its sha256 recorded, in the entry of the
    tutorial graph: it passes the entry's checks and loads, but is not the module asked
    for. The process that found it reports it, rebuilds it and must load the rebuilt one
    (the path it first loaded from already maps the wrong object)."""
    compiledir = tmp_path / "compiledir"
    _compile_in(compiledir, "tutorial", "other")
    entries = {e.meta["what"]: e for e in ModuleCache(compiledir).entries()}
    tutorial = entries["graph FunctionGraph([x, y, z] -> [mul.out])"]
    other = entries["graph FunctionGraph([x, y, z] -> [add.out])"]
    data = other.library.read_bytes()
    tutorial.library.write_bytes(data)
    meta = dict(tutorial.meta, sha256=hashlib.sha256(data).hexdigest())
    (tutorial.path / "meta.json").write_text(json.dumps(meta))
    proc = _compile_in(compiledir, "tutorial")
    assert "RESULT tutorial 9.0" in proc.stdout
    assert proc.stderr.count("CorruptEntryWarning") == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        entry = ModuleCache(compiledir).lookup(tutorial.key)
    assert entry is not None and entry.library.read_bytes() != data  # rebuilt in place
    assert list((compiledir / "tmp").iterdir()) == []  # the reload's link went
