"""Writing and pruning the folders of kept files under ``compiledir``
(:mod:`opweave.link.trusted_files`), which the rewrite cache and plugin discovery share."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from opweave.link.trusted_files import (
    files_by_age,
    keep_newest,
    read_trusted,
    remove_quietly,
    write_whole,
)


def aged(folder: Path, names: list[str]) -> list[Path]:
    """Files named ``names`` in ``folder``, each modified a second after the one before."""
    paths = []
    for age, name in enumerate(names):
        path = folder / name
        path.write_text(name)
        os.utime(path, ns=(age * 10**9, age * 10**9))
        paths.append(path)
    return paths


def test_write_whole_makes_a_private_folder_and_leaves_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "kept" / "entry.json"
    write_whole(path, b"first")
    write_whole(path, b"second")
    assert read_trusted(path) == (b"second", None)
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert [p.name for p in path.parent.iterdir()] == ["entry.json"]


def test_write_whole_raises_and_cleans_up_when_it_cannot_rename(tmp_path: Path) -> None:
    target = tmp_path / "kept" / "entry.json"
    target.mkdir(parents=True)  # a directory where the file should go
    (target / "inside").write_text("x")
    with pytest.raises(OSError):
        write_whole(target, b"data")
    assert sorted(p.name for p in target.parent.iterdir()) == ["entry.json"]


def test_files_by_age_and_keep_newest(tmp_path: Path) -> None:
    old, middle, new = aged(tmp_path, ["c.json", "a.json", "b.json"])
    (tmp_path / "other.pickle").write_text("not ours")
    assert files_by_age(tmp_path, ".json") == [old, middle, new]
    keep_newest(tmp_path, ".json", 2)
    assert files_by_age(tmp_path, ".json") == [middle, new]
    assert (tmp_path / "other.pickle").exists()
    assert files_by_age(tmp_path / "missing", ".json") == []


def test_remove_quietly_says_whether_it_removed(tmp_path: Path) -> None:
    path = tmp_path / "entry.json"
    path.write_text("x")
    assert remove_quietly(path) is True
    assert remove_quietly(path) is False
