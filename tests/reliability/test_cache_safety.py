"""The C module cache under stress (DESIGN.md section 7): other users' files, damaged
entries, read-only and full disks, concurrent and killed compiles.

Most tests compile in fresh processes (the venv's Python): a process that has loaded a
module never consults the cache for it again, and a shared object loaded once cannot be
"damaged" for the same process. Builds are counted through the DEBUG line the cache logs
for each one (``opweave_c.cache compiling ...``). The tests run as root here and in CI:
"another user" is a file ``os.chown``-ed to :data:`OTHER_UID`.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
import time
import warnings
from pathlib import Path

import pytest

from opweave_c.cache import ModuleCache, UnsafeEntryWarning
from opweave_c.errors import CacheDirError, CompilationError

#: A uid that is neither ours nor root's.
OTHER_UID = 12345

needs_chown = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown to another uid needs root"
)

#: Compiles the graphs named on its command line (``tutorial`` = the tutorial's ``(x + y) * z``) and
#: prints ``RESULT <name> <value>`` for each. ``OPWEAVE_TEST_GO=<file>``: wait for the file
#: before compiling; ``OPWEAVE_TEST_READ_ONLY=<dir>``: every write under ``<dir>`` fails with
#: EROFS, as on a read-only mount; ``OPWEAVE_TEST_DROP_UID=<uid>``: become that user (after
#: importing what the compile needs) before compiling; ``OPWEAVE_TEST_PY_INCLUDE=<dir>``:
#: Python's headers are there (a copy another user can read).
SCRIPT = textwrap.dedent(
    """
    import logging, os, sys, time
    logging.basicConfig(level=logging.DEBUG, stream=sys.stderr, format="%(name)s %(message)s")
    import opweave
    from opweave.compile import Mode
    from opweave_double import add, double, mul

    read_only = os.environ.get("OPWEAVE_TEST_READ_ONLY")
    if read_only:
        import builtins, errno, io

        root = os.path.realpath(read_only)

        def under(path):
            try:
                path = os.fsdecode(os.fspath(path))
            except TypeError:
                return False
            path = os.path.realpath(path)
            return path == root or path.startswith(root + os.sep)

        def refuse(path):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), os.fsdecode(os.fspath(path)))

        def guard(fn, npaths=1):
            def guarded(*args, **kwargs):
                for path in args[:npaths]:
                    if under(path):
                        refuse(path)
                return fn(*args, **kwargs)
            return guarded

        for name in ("mkdir", "rmdir", "unlink", "remove", "chmod", "utime", "truncate"):
            setattr(os, name, guard(getattr(os, name)))
        for name in ("rename", "replace", "link", "symlink"):
            setattr(os, name, guard(getattr(os, name), 2))
        WRITE = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
        real_os_open, real_io_open = os.open, io.open

        def os_open(path, flags, *args, **kwargs):
            if flags & WRITE and under(path):
                refuse(path)
            return real_os_open(path, flags, *args, **kwargs)

        def io_open(file, mode="r", *args, **kwargs):
            if not isinstance(file, int) and set(mode) & set("wax+") and under(file):
                refuse(file)
            return real_io_open(file, mode, *args, **kwargs)

        os.open, io.open, builtins.open = os_open, io_open, io_open

    include = os.environ.get("OPWEAVE_TEST_PY_INCLUDE")
    if include:  # Python's headers, where another user can read them
        import sysconfig

        real_get_paths = sysconfig.get_paths
        sysconfig.get_paths = lambda *a, **k: {**real_get_paths(*a, **k), "include": include}

    drop = os.environ.get("OPWEAVE_TEST_DROP_UID")
    if drop:
        # Everything a build imports, imported while the interpreter's files are readable.
        import cffi, cffi.recompiler, filelock, json, hashlib, shlex, shutil, tempfile
        import email.parser, opweave_c.linkers.c_linker, opweave_c.module
        from opweave.plugins import get_plugin_manager

        get_plugin_manager()  # reads the installed distributions' metadata
        os.setgroups([])
        os.setgid(int(drop))
        os.setuid(int(drop))

    go = os.environ.get("OPWEAVE_TEST_GO")
    while go and not os.path.exists(go):
        time.sleep(0.01)
    x, y, z = double("x"), double("y"), double("z")
    graphs = {"tutorial": mul(add(x, y), z), "other": add(mul(x, y), z), "third": mul(mul(x, y), z)}
    for name in sys.argv[1:]:
        f = opweave.function([x, y, z], graphs[name], mode=Mode(linker="c"))
        print("RESULT", name, f(1.0, 2.0, 3.0), flush=True)
    """
)
RESULTS = {"tutorial": "9.0", "other": "5.0", "third": "6.0"}


def _env(compiledir: Path, **extra: str) -> dict[str, str]:
    flags = f"compiledir={compiledir}"
    if "cxx" in extra:
        flags += f",cxx={extra.pop('cxx')}"
    return {**os.environ, "OPWEAVE_FLAGS": flags, **extra}


def compile_in(
    compiledir: Path, *graphs: str, check: bool = True, **env: str
) -> subprocess.CompletedProcess:
    """Compile ``graphs`` (default: the tutorial graph) in a fresh process using ``compiledir``."""
    proc = subprocess.run(
        [sys.executable, "-W", "always", "-c", SCRIPT, *(graphs or ("tutorial",))],
        capture_output=True,
        text=True,
        env=_env(compiledir, **env),
        timeout=240,
    )
    if check:
        assert proc.returncode == 0, proc.stderr
        for name in graphs or ("tutorial",):
            assert f"RESULT {name} {RESULTS[name]}" in proc.stdout
    return proc


def builds(proc: subprocess.CompletedProcess) -> int:
    """How many modules the process built (the cache logs each build at DEBUG level)."""
    return proc.stderr.count("opweave_c.cache compiling")


def warned(proc: subprocess.CompletedProcess, category: str) -> int:
    """How many warnings of ``category`` the process printed."""
    return proc.stderr.count(f": {category}: ")


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A compile directory holding the tutorial graph's module (built once for the module)."""
    compiledir = tmp_path_factory.mktemp("template") / "compiledir"
    assert builds(compile_in(compiledir)) == 1
    return compiledir


@pytest.fixture
def compiledir(template: Path, tmp_path: Path) -> Path:
    """A private copy of :func:`template` (modes kept, owned by us)."""
    target = tmp_path / "compiledir"
    shutil.copytree(template, target, symlinks=True)
    return target


def the_entry(compiledir: Path):
    """The one entry of ``compiledir``."""
    (entry,) = ModuleCache(compiledir).entries()
    return entry


def chown_tree(path: Path, uid: int) -> None:
    """``chown -R`` (without following links)."""
    os.chown(path, uid, uid, follow_symlinks=False)
    if path.is_dir() and not path.is_symlink():
        for child in path.rglob("*"):
            os.chown(child, uid, uid, follow_symlinks=False)


def rewrite_library(entry, data: bytes, *, update_hash: bool) -> None:
    """Replace an entry's shared object, recording its sha256 in ``meta.json`` if asked."""
    entry.library.write_bytes(data)
    if update_hash:
        meta = dict(entry.meta, sha256=hashlib.sha256(data).hexdigest())
        (entry.path / "meta.json").write_text(json.dumps(meta))


def assert_sound(compiledir: Path) -> None:
    """The cache holds one entry that passes every check, with a real shared object in it,
    and no build left half done."""
    cache = ModuleCache(compiledir)
    (entry,) = cache.entries()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cache.lookup(entry.key) is not None
    assert entry.library.read_bytes()[:4] == b"\x7fELF"
    for path in [entry.path, *entry.path.iterdir()]:
        assert path.lstat().st_uid == os.geteuid()
    assert [
        p.name for p in (compiledir / "tmp").iterdir() if not p.name.startswith("discard")
    ] == []


# ---------------------------------------------------------------------------- defect 5


def compile_planted_library(tmp_path: Path, marker: Path) -> bytes:
    """A shared object whose loading writes ``marker`` (what an attacker would plant)."""
    source = tmp_path / "planted.c"
    source.write_text(
        "#include <stdio.h>\n"
        "__attribute__((constructor)) static void planted(void) {\n"
        f'    FILE *f = fopen("{marker}", "w");\n'
        '    if (f) { fputs("planted code ran\\n", f); fclose(f); }\n'
        "}\n"
    )
    target = tmp_path / "planted.so"
    subprocess.run(["cc", "-shared", "-fPIC", str(source), "-o", str(target)], check=True)
    return target.read_bytes()


@needs_chown
def test_a_planted_entry_of_another_user_is_never_loaded(compiledir, tmp_path) -> None:
    """Another user who could write into ``c/<xx>/`` plants a shared object with a matching
    sha256 in its metadata: the next compile must not load (and so run) it."""
    marker = tmp_path / "planted-code-ran"
    entry = the_entry(compiledir)
    rewrite_library(entry, compile_planted_library(tmp_path, marker), update_hash=True)
    chown_tree(entry.path, OTHER_UID)
    proc = compile_in(compiledir)
    assert not marker.exists()
    assert warned(proc, "UnsafeEntryWarning") == 1
    assert f"belongs to uid {OTHER_UID}" in proc.stderr and str(entry.path) in proc.stderr
    assert builds(proc) == 1
    assert_sound(compiledir)


@pytest.mark.parametrize("mode", [0o770, 0o707, 0o777], ids=oct)
def test_a_shard_others_can_write_to_is_refused(compiledir, tmp_path, mode) -> None:
    """A ``c/<xx>/`` directory group or others can write to is refused, naming the path."""
    marker = tmp_path / "planted-code-ran"
    entry = the_entry(compiledir)
    rewrite_library(entry, compile_planted_library(tmp_path, marker), update_hash=True)
    entry.path.parent.chmod(mode)
    proc = compile_in(compiledir, check=False)
    assert proc.returncode != 0 and not marker.exists()
    assert "CacheDirError" in proc.stderr
    assert f"{entry.path.parent} is writable by group or others" in proc.stderr


@needs_chown
@pytest.mark.parametrize("where", ["c", "c/<xx>", "locks", "tmp", "."])
def test_cache_directories_of_another_user_are_refused(compiledir, where) -> None:
    """Every directory on the way to a shared object (and where builds and locks live)
    must be ours or root's."""
    entry = the_entry(compiledir)
    path = entry.path.parent if where == "c/<xx>" else compiledir / where
    os.chown(path, OTHER_UID, OTHER_UID)
    with pytest.raises(CacheDirError, match=f"belongs to uid {OTHER_UID}") as info:
        ModuleCache(compiledir).lookup(entry.key)
    assert str(path.resolve()) in str(info.value) or str(path) in str(info.value)


@pytest.mark.parametrize("where", ["c", "locks", "tmp"])
def test_cache_directories_others_can_write_to_are_refused(compiledir, where) -> None:
    (compiledir / where).chmod(0o777)
    with pytest.raises(CacheDirError, match=r"writable by group or others.*chmod go-w"):
        ModuleCache(compiledir)


def fake_build(tmp: Path) -> dict:
    (tmp / "lib.so").write_bytes(b"not really a library")
    return {"library": "lib.so"}


KEY = "ab" * 32


def _owned_by_other(path: Path) -> str:
    os.chown(path, OTHER_UID, OTHER_UID)
    return f"belongs to uid {OTHER_UID}"


def _writable_by_others(path: Path) -> str:
    path.chmod(0o666 if path.is_file() else 0o777)
    return "writable by group or others"


def _symlink_to_a_copy(path: Path) -> str:
    copy = path.with_name(path.name + ".elsewhere")
    os.replace(path, copy)
    path.symlink_to(copy)
    return "symbolic link" if copy.is_file() else "is not a directory"


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(_owned_by_other, marks=needs_chown, id="owned-by-another-uid"),
        pytest.param(_writable_by_others, id="writable-by-others"),
        pytest.param(_symlink_to_a_copy, id="symlink"),
    ],
)
@pytest.mark.parametrize("part", ["entry", "lib.so", "meta.json"])
def test_unsafe_entry_is_reported_discarded_and_rebuilt(tmp_path, damage, part) -> None:
    """An entry directory, shared object or ``meta.json`` another user could have written is
    never returned: reported once (naming the path and what is wrong), discarded, rebuilt."""
    cache = ModuleCache(tmp_path)
    entry = cache.get_or_build(KEY, fake_build, "test entry")
    path = entry.path if part == "entry" else entry.path / part
    problem = damage(path)
    with pytest.warns(UnsafeEntryWarning, match="refusing C cache entry") as record:
        assert cache.lookup(KEY) is None
    assert len(record) == 1
    message = str(record[0].message)
    assert str(path) in message and problem in message
    assert not entry.path.exists() and not entry.path.is_symlink()
    rebuilt = cache.get_or_build(KEY, fake_build, "test entry")
    assert rebuilt.fresh and rebuilt.path.lstat().st_uid == os.geteuid()
    assert cache.lookup(KEY) is not None


def test_a_fifo_in_place_of_the_library_does_not_hang_the_lookup(tmp_path) -> None:
    cache = ModuleCache(tmp_path)
    entry = cache.get_or_build(KEY, fake_build, "test entry")
    entry.library.unlink()
    os.mkfifo(entry.library, 0o600)
    with pytest.warns(UnsafeEntryWarning, match="is not a regular file"):
        assert cache.lookup(KEY) is None


# ---------------------------------------------------------------------- damaged entries


def _truncate(entry) -> None:
    data = entry.library.read_bytes()
    entry.library.write_bytes(data[: len(data) // 2])


def _flip_bytes(entry) -> None:
    data = bytearray(entry.library.read_bytes())
    for i in range(1000, len(data), 997):
        data[i] ^= 0xFF
    entry.library.write_bytes(bytes(data))


def _missing_library(entry) -> None:
    entry.library.unlink()


def _garbage_meta(entry) -> None:
    (entry.path / "meta.json").write_bytes(os.urandom(200))


def _empty_meta(entry) -> None:
    (entry.path / "meta.json").write_bytes(b"")


def _meta_escaping_the_entry(entry) -> None:
    outside = entry.path.parents[2] / "outside.so"  # <compiledir>/outside.so
    shutil.copy(entry.library, outside)
    meta = dict(entry.meta, library="../../../outside.so")
    (entry.path / "meta.json").write_text(json.dumps(meta))


def _empty_library_with_its_hash(entry) -> None:
    rewrite_library(entry, b"", update_hash=True)


def _garbage_library_with_its_hash(entry) -> None:
    rewrite_library(entry, os.urandom(4096), update_hash=True)


def _truncated_library_with_its_hash(entry) -> None:
    data = entry.library.read_bytes()
    rewrite_library(entry, data[:4096], update_hash=True)


def _library_of_another_uid(entry) -> None:
    os.chown(entry.library, OTHER_UID, OTHER_UID)


DAMAGE = {
    "truncated-so": (_truncate, "CorruptEntryWarning"),
    "flipped-bytes": (_flip_bytes, "CorruptEntryWarning"),
    "missing-so": (_missing_library, "CorruptEntryWarning"),
    "garbage-meta": (_garbage_meta, "CorruptEntryWarning"),
    "empty-meta": (_empty_meta, "CorruptEntryWarning"),
    "meta-names-a-file-outside": (_meta_escaping_the_entry, "CorruptEntryWarning"),
    "empty-so-matching-hash": (_empty_library_with_its_hash, "CorruptEntryWarning"),
    "garbage-so-matching-hash": (_garbage_library_with_its_hash, "CorruptEntryWarning"),
    "truncated-so-matching-hash": (_truncated_library_with_its_hash, "CorruptEntryWarning"),
    "so-of-another-uid": (_library_of_another_uid, "UnsafeEntryWarning"),
}


@pytest.mark.parametrize("kind", list(DAMAGE))
def test_a_damaged_entry_is_reported_once_and_rebuilt(compiledir, kind) -> None:
    damage, category = DAMAGE[kind]
    if kind == "so-of-another-uid" and os.geteuid() != 0:
        pytest.skip("chown to another uid needs root")
    damage(the_entry(compiledir))
    proc = compile_in(compiledir)
    assert warned(proc, category) == 1
    assert warned(proc, "CorruptEntryWarning") + warned(proc, "UnsafeEntryWarning") == 1
    assert builds(proc) == 1
    assert_sound(compiledir)


# ----------------------------------------------------------------- defect 7: read-only


def snapshot(root: Path) -> dict[str, tuple[int, int, int]]:
    """Every path under ``root`` with its mode, size and modification time."""
    found = {}
    for path in [root, *root.rglob("*")]:
        info = path.lstat()
        found[str(path.relative_to(root))] = (info.st_mode, info.st_size, info.st_mtime_ns)
    return found


def test_a_read_only_file_system_is_read_and_builds_go_elsewhere(compiledir) -> None:
    """On a read-only mount (every write under the compile directory fails with EROFS):
    cached modules load; a module the cache lacks is built in a private temporary
    directory, with one warning for the process, and nothing is written to the cache."""
    before = snapshot(compiledir)
    proc = compile_in(compiledir, "tutorial", OPWEAVE_TEST_READ_ONLY=str(compiledir))
    assert builds(proc) == 0 and "Warning" not in proc.stderr
    proc = compile_in(compiledir, "other", "third", OPWEAVE_TEST_READ_ONLY=str(compiledir))
    assert builds(proc) == 2
    assert warned(proc, "ReadOnlyCacheWarning") == 1
    assert "cannot be written" in proc.stderr and "Read-only file system" in proc.stderr
    assert str(compiledir) in proc.stderr and "Traceback" not in proc.stderr
    assert snapshot(compiledir) == before


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="needs uids")
def test_a_shared_cache_the_user_cannot_write_to_is_read(compiledir) -> None:
    """The cluster case: a cache an administrator (root) filled, which a user can read but
    not write. Run as a real unprivileged process (the kernel refuses its writes)."""
    if os.geteuid() == 0:
        base = Path(tempfile.mkdtemp(prefix="opweave-shared-cache-"))
        try:
            base.chmod(0o755)
            # The interpreter may live where only root can read (/root/.pyenv): the headers
            # the builds need go where the unprivileged user can read them, for every run.
            include = base / "include"
            shutil.copytree(sysconfig.get_paths()["include"], include)
            shared = base / "compiledir"
            assert builds(compile_in(shared, OPWEAVE_TEST_PY_INCLUDE=str(include))) == 1
            for path in [base, *base.rglob("*")]:
                path.chmod(0o755 if path.is_dir() else 0o644)
            home = base / "home"
            home.mkdir()
            chown_tree(home, OTHER_UID)
            env = {
                "OPWEAVE_TEST_DROP_UID": str(OTHER_UID),
                "OPWEAVE_TEST_PY_INCLUDE": str(include),
                "HOME": str(home),
                "TMPDIR": str(home),
            }
            _check_read_only_cache(shared, home, env)
        finally:
            shutil.rmtree(base, ignore_errors=True)
    else:
        for path in [compiledir, *compiledir.rglob("*")]:
            if path.is_dir():
                path.chmod(0o555)
        try:
            _check_read_only_cache(compiledir, None, {})
        finally:
            for path in [compiledir, *compiledir.rglob("*")]:
                if path.is_dir():
                    path.chmod(0o755)


def _check_read_only_cache(shared: Path, private_tmp: Path | None, env: dict[str, str]) -> None:
    before = snapshot(shared)
    proc = compile_in(shared, "tutorial", **env)
    assert builds(proc) == 0 and "Warning" not in proc.stderr
    proc = compile_in(shared, "other", "third", **env)
    assert builds(proc) == 2
    assert warned(proc, "ReadOnlyCacheWarning") == 1
    assert "cannot be written" in proc.stderr and "Traceback" not in proc.stderr
    assert snapshot(shared) == before
    if private_tmp is not None:
        assert list(private_tmp.iterdir()) == []  # the private builds went after loading


# ----------------------------------------------------------------- defect 8: full disk


def full_disk_compiler(tmp_path: Path) -> Path:
    """A compiler that fails as GCC does when the disk is full."""
    wrapper = tmp_path / "cc-full-disk"
    wrapper.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = --version ]; then exec cc --version; fi\n'
        'echo "cc1: fatal error: error writing to /tmp/ccfull.s: No space left on device" >&2\n'
        "exit 1\n"
    )
    wrapper.chmod(0o755)
    return wrapper


def no_space(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _compile_tutorial_graph_in_process(compiledir: Path, cxx: Path):
    import opweave
    from opweave.compile import Mode
    from opweave_double import add, double, mul

    x, y, z = double("x"), double("y"), double("z")
    with opweave.config.change_flags(compiledir=str(compiledir), cxx=str(cxx)):
        return opweave.function([x, y, z], mul(add(x, y), z), mode=Mode(linker="c"))


def test_on_a_full_disk_the_compiler_error_is_what_the_user_sees(tmp_path, monkeypatch) -> None:
    """Keeping the failed build's source cannot work on a full disk: that failure must not
    replace (or hide) the compiler's own error, nor leave a partial copy behind."""
    compiledir = tmp_path / "compiledir"
    cxx = full_disk_compiler(tmp_path)
    build_tmp = str(compiledir / "tmp")
    real_replace = os.replace

    def replace(src, dst, *args, **kwargs):
        if os.fspath(src).startswith(build_tmp) and "failed-" in os.fspath(dst):
            no_space()
        return real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(shutil, "copytree", no_space)
    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(CompilationError) as info:
        _compile_tutorial_graph_in_process(compiledir, cxx)
    message = str(info.value)
    assert message.startswith("compiling graph")
    assert message.splitlines()[-1].endswith("No space left on device")  # the compiler's
    assert "the source could not be kept: OSError: [Errno 28]" in message
    assert info.value.source_path is None
    assert list((compiledir / "tmp").iterdir()) == []  # no partial copy
    assert ModuleCache(compiledir).entries() == []


def test_a_failed_build_is_kept_without_needing_disk_space(tmp_path, monkeypatch) -> None:
    """The failed build is kept by renaming it (no copy, which a full disk would refuse)."""
    compiledir = tmp_path / "compiledir"
    monkeypatch.setattr(shutil, "copytree", no_space)
    with pytest.raises(CompilationError, match="No space left on device") as info:
        _compile_tutorial_graph_in_process(compiledir, full_disk_compiler(tmp_path))
    kept = Path(info.value.source_path)
    assert kept.is_file() and "opw_graph" in kept.read_text()
    assert f"Source kept at: {kept}" in str(info.value)


# ------------------------------------------------------ concurrency and killed compiles


def logging_compiler(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A ``cc`` wrapper that logs each build to a file, takes a second (so that concurrent
    compiles overlap), and hangs while a ``hang`` file exists (after touching ``started``)."""
    log, hang, started = tmp_path / "builds.log", tmp_path / "hang", tmp_path / "started"
    wrapper = tmp_path / "cc-logged"
    wrapper.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = --version ]; then exec cc --version; fi\n'
        f'echo "$$" >> {log}\n'
        f"if [ -e {hang} ]; then touch {started}; sleep 60; fi\n"
        "sleep 1\n"
        'exec cc "$@"\n'
    )
    wrapper.chmod(0o755)
    return wrapper, log, hang


def test_concurrent_compiles_of_one_key_build_it_once(tmp_path) -> None:
    compiledir = tmp_path / "compiledir"
    cxx, log, _ = logging_compiler(tmp_path)
    go = tmp_path / "go"
    env = _env(compiledir, cxx=str(cxx), OPWEAVE_TEST_GO=str(go))
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", SCRIPT, "tutorial"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(4)
    ]
    go.touch()  # all of them start compiling at once
    results = [p.communicate(timeout=240) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in results]
    assert all("RESULT tutorial 9.0" in out for out, _ in results)
    assert len(log.read_text().split()) == 1  # the compiler ran once
    assert sum(err.count("opweave_c.cache compiling") for _, err in results) == 1
    assert_sound(compiledir)


def _start_and_kill_mid_compile(compiledir: Path, cxx: Path, started: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, "tutorial"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=_env(compiledir, cxx=str(cxx)),
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not started.exists():
            assert proc.poll() is None, "the compile ended before it was killed"
            assert time.monotonic() < deadline
            time.sleep(0.02)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the process and the compiler it started
        proc.wait()


def test_kill_9_mid_compile_leaves_the_cache_usable(tmp_path) -> None:
    compiledir = tmp_path / "compiledir"
    cxx, log, hang = logging_compiler(tmp_path)
    hang.touch()
    _start_and_kill_mid_compile(compiledir, cxx, tmp_path / "started")
    hang.unlink()
    assert ModuleCache(compiledir).entries() == []  # nothing half made went into c/
    (abandoned,) = (compiledir / "tmp").iterdir()
    proc = compile_in(compiledir, cxx=str(cxx))  # the killed process's lock is free
    assert builds(proc) == 1 and "Warning" not in proc.stderr
    assert len(log.read_text().split()) == 2
    # The abandoned build directory stays until it is an hour old, then goes.
    assert abandoned.exists()
    old = time.time() - 7200
    os.utime(abandoned, (old, old))
    ModuleCache(compiledir)
    assert not abandoned.exists()
    assert_sound(compiledir)


@pytest.mark.slow
def test_kill_9_at_random_moments_never_breaks_the_cache(tmp_path) -> None:
    """Kill compiles at random points (importing, generating, compiling, storing); every
    next compile must still succeed, and the cache end up sound."""
    import random

    compiledir = tmp_path / "compiledir"
    rng = random.Random(0)
    for _ in range(12):
        proc = subprocess.Popen(
            [sys.executable, "-c", SCRIPT, "tutorial"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=_env(compiledir),
            start_new_session=True,
        )
        time.sleep(rng.uniform(0.0, 1.2))
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        compile_in(compiledir)
        ModuleCache(compiledir).clear()
    compile_in(compiledir)
    assert_sound(compiledir)


def test_the_warm_path_checks_each_entry_with_a_few_stat_calls(compiledir, monkeypatch) -> None:
    """Guards the cost of a cache hit: the safety checks are lstat/fstat calls on the
    shard, the entry and the two files opened anyway, not walks of the tree."""
    cache = ModuleCache(compiledir)
    entry = the_entry(compiledir)
    calls = []
    for name in ("stat", "lstat", "fstat"):
        real = getattr(os, name)
        monkeypatch.setattr(
            os,
            name,
            lambda *a, _real=real, _name=name, **k: (calls.append(_name), _real(*a, **k))[1],
        )
    assert cache.lookup(entry.key) is not None
    assert len(calls) <= 6, calls
    assert stat.S_ISDIR(os.lstat(entry.path).st_mode)
