"""The cache of rewritten graphs keeps nothing where another user could read or change
it: a graph kept holds its constants, and a kept graph is unpickled (code) when read.

The tests run as root here and in CI: "another user" is a directory ``os.chown``-ed to
:data:`OTHER_UID`.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import Mode, rewrite_cache
from opweave.link.trusted_files import read_trusted, unsafe_ancestry, write_whole

#: A uid that is neither ours nor root's.
OTHER_UID = 12345

needs_chown = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown to another uid needs root"
)

SECRET = np.array([3.25, -1.5, 8.0])


def _compile(compiledir: Path):
    x = ot.dvector("x")
    with opweave.config.change_flags(compiledir=str(compiledir), cache_rewrites=True):
        return opweave.function([x], ot.exp(x) * ot.constant(SECRET), mode=Mode(linker="py"))


def _kept(compiledir: Path) -> list[Path]:
    folder = compiledir / "rewritten"
    return sorted(folder.glob("*.pickle")) if folder.is_dir() else []


def _unsafe_messages(caught: list[warnings.WarningMessage]) -> list[str]:
    return [
        str(w.message)
        for w in caught
        if issubclass(w.category, rewrite_cache.UnsafeRewriteCacheWarning)
    ]


def _check(f) -> None:
    x = np.array([0.5, -2.0, 1.0])
    np.testing.assert_allclose(f(x), np.exp(x) * SECRET, rtol=1e-15)


def test_a_private_compiledir_keeps_the_graph(tmp_path: Path) -> None:
    _check(_compile(tmp_path / "compiledir"))
    assert len(_kept(tmp_path / "compiledir")) == 1


@needs_chown
def test_nothing_is_written_into_a_world_writable_compiledir_of_another_user(
    tmp_path: Path,
) -> None:
    compiledir = tmp_path / "compiledir"
    compiledir.mkdir()
    compiledir.chmod(0o777)
    os.chown(compiledir, OTHER_UID, OTHER_UID)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f = _compile(compiledir)
    _check(f)
    assert _kept(compiledir) == [] and not (compiledir / "rewritten").exists()
    assert _unsafe_messages(caught) == [
        f"ignored the cached rewritten graphs: {compiledir} belongs to uid {OTHER_UID}, "
        f"not to you (uid {os.geteuid()}) or root",
        f"did not keep the rewritten graph: {compiledir} belongs to uid {OTHER_UID}, "
        f"not to you (uid {os.geteuid()}) or root",
    ]


def test_nothing_is_written_below_a_directory_others_can_replace(tmp_path: Path) -> None:
    parent = tmp_path / "open"
    parent.mkdir()
    parent.chmod(0o777)  # no sticky bit: anyone may rename what is in it
    compiledir = parent / "compiledir"
    compiledir.mkdir(mode=0o700)
    with pytest.warns(rewrite_cache.UnsafeRewriteCacheWarning, match=r"above .* writable"):
        f = _compile(compiledir)
    _check(f)
    assert _kept(compiledir) == []


def test_a_kept_graph_below_a_directory_others_can_replace_is_not_read(tmp_path: Path) -> None:
    parent = tmp_path / "parent"
    parent.mkdir(mode=0o755)
    compiledir = parent / "compiledir"
    _compile(compiledir)
    assert len(_kept(compiledir)) == 1
    parent.chmod(0o777)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f = _compile(compiledir)
    assert not f.maker.rewrites_reused
    _check(f)
    messages = _unsafe_messages(caught)
    assert [m.split(":")[0] for m in messages] == [
        "ignored the cached rewritten graphs",
        "did not keep the rewritten graph",
    ]
    assert all(f"{parent} (above {compiledir}) is writable by group" in m for m in messages)


def test_read_trusted_checks_the_directories_above(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "kept.bin"
    write_whole(path, b"data")
    assert read_trusted(path) == (b"data", None)
    (tmp_path / "a").chmod(0o777)
    data, problem = read_trusted(path)
    assert data is None and problem is not None
    assert f"{tmp_path / 'a'} (above {path.parent})" in problem
    (tmp_path / "a").chmod(0o1777)  # sticky: others cannot rename what is ours
    assert read_trusted(path) == (b"data", None)


@needs_chown
def test_unsafe_ancestry_follows_symbolic_links(tmp_path: Path) -> None:
    target = tmp_path / "real" / "compiledir"
    target.mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(target)
    assert unsafe_ancestry(link) is None
    os.chown(link, OTHER_UID, OTHER_UID, follow_symlinks=False)
    assert "belongs to uid 12345" in (unsafe_ancestry(link) or "")
    os.chown(link, 0, 0, follow_symlinks=False)
    os.chown(tmp_path / "real", OTHER_UID, OTHER_UID)  # the directory the link leads into
    assert f"{tmp_path / 'real'} (above {link})" in (unsafe_ancestry(link) or "")
