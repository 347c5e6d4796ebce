"""The plugins found in the installed distributions, kept under ``compiledir`` between
processes: found again exactly when a directory of ``sys.path`` changed."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest

from opweave.configdefaults import config
from opweave.plugins import discovery
from opweave.plugins.manager import DISABLE_AUTOLOAD_ENV, create_plugin_manager

GROUP = "opweave.plugins"

PLUGIN = """
from opweave.plugins import hookimpl

@hookimpl
def opweave_backend_info():
    return {"name": "%s", "linkers": [], "available": True, "reason": None}
"""

LONG_AGO = time.time() - 3600


def make_dist(site: Path, dist: str, module: str) -> None:
    """A distribution declaring ``module`` as an opweave plugin, as an installer writes it."""
    info = site / f"{dist.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{GROUP}]\n{module} = {module}\n")
    (site / f"{module}.py").write_text(PLUGIN % dist)


def settle(site: Path) -> None:
    """Date ``site`` an hour back, as a directory nothing installed into lately."""
    os.utime(site, (LONG_AGO, LONG_AGO))


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A directory of distributions, the only entry of ``sys.path`` (so that nothing else
    changes it), and a compile directory of the test's own."""
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.setattr(sys, "path", [str(folder)])
    with config.change_flags(compiledir=str(tmp_path / "compiledir")):
        yield folder


def names(found: list[discovery.PluginSource]) -> list[tuple[str, str | None, str | None]]:
    return [(s.entry_point.name, s.distribution, s.version) for s in found]


def scans(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Count the reads of the installed distributions' metadata."""
    calls: list[str] = []
    real = metadata.entry_points

    def counted(**kwargs):
        calls.append(kwargs["group"])
        return real(**kwargs)

    monkeypatch.setattr(discovery.metadata, "entry_points", counted)
    return calls


def test_an_unchanged_path_is_not_read_again(site: Path, monkeypatch) -> None:
    make_dist(site, "fake-one", "fake_one_plugin")
    settle(site)
    calls = scans(monkeypatch)
    first = discovery.find_plugins(GROUP)
    assert names(first) == [("fake_one_plugin", "fake-one", "1.0")]
    assert len(list(discovery.kept_folder().glob("*.json"))) == 1
    again = discovery.find_plugins(GROUP)
    assert calls == [GROUP]  # the second answer was the kept one
    assert names(again) == names(first)
    assert [s.entry_point for s in again] == [s.entry_point for s in first]
    assert again[0].entry_point.load().__name__ == "fake_one_plugin"


def test_installing_a_distribution_is_noticed(site: Path, monkeypatch) -> None:
    make_dist(site, "fake-one", "fake_one_plugin")
    settle(site)
    discovery.find_plugins(GROUP)
    make_dist(site, "fake-two", "fake_two_plugin")  # changes the directory's time
    calls = scans(monkeypatch)
    found = discovery.find_plugins(GROUP)
    assert sorted(s[0] for s in names(found)) == ["fake_one_plugin", "fake_two_plugin"]
    assert calls == [GROUP]


def test_removing_a_distribution_is_noticed(site: Path) -> None:
    make_dist(site, "fake-one", "fake_one_plugin")
    make_dist(site, "fake-two", "fake_two_plugin")
    settle(site)
    assert len(discovery.find_plugins(GROUP)) == 2
    for path in site.glob("fake_two*"):
        if path.is_dir():
            for item in path.iterdir():
                item.unlink()
            path.rmdir()
    settle(site)  # even dated back, the time differs from the kept one
    assert names(discovery.find_plugins(GROUP)) == [("fake_one_plugin", "fake-one", "1.0")]


def test_a_directory_changed_just_now_is_not_kept(site: Path, monkeypatch) -> None:
    make_dist(site, "fake-one", "fake_one_plugin")  # the directory changed just now
    calls = scans(monkeypatch)
    assert len(discovery.find_plugins(GROUP)) == 1
    assert not discovery.kept_folder().exists()
    discovery.find_plugins(GROUP)
    assert calls == [GROUP, GROUP]


def test_a_changed_sys_path_is_another_answer(site: Path, tmp_path: Path) -> None:
    make_dist(site, "fake-one", "fake_one_plugin")
    settle(site)
    assert len(discovery.find_plugins(GROUP)) == 1
    other = tmp_path / "other"
    other.mkdir()
    make_dist(other, "fake-two", "fake_two_plugin")
    settle(other)
    sys.path.insert(0, str(other))
    found = discovery.find_plugins(GROUP)
    assert sorted(s[0] for s in names(found)) == ["fake_one_plugin", "fake_two_plugin"]
    assert len(list(discovery.kept_folder().glob("*.json"))) == 2


def test_a_damaged_answer_is_read_again_and_replaced(site: Path, monkeypatch) -> None:
    make_dist(site, "fake-one", "fake_one_plugin")
    settle(site)
    discovery.find_plugins(GROUP)
    (kept,) = discovery.kept_folder().glob("*.json")
    kept.write_text('{"format": 1, "stamp": ')
    calls = scans(monkeypatch)
    assert names(discovery.find_plugins(GROUP)) == [("fake_one_plugin", "fake-one", "1.0")]
    assert calls == [GROUP]
    discovery.find_plugins(GROUP)
    assert calls == [GROUP]  # replaced by a good one


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="file owners are POSIX")
def test_an_answer_others_could_write_is_not_read(site: Path, monkeypatch) -> None:
    make_dist(site, "fake-one", "fake_one_plugin")
    settle(site)
    discovery.find_plugins(GROUP)
    (kept,) = discovery.kept_folder().glob("*.json")
    text = kept.read_text().replace("fake_one_plugin", "planted_module")
    kept.write_text(text)
    kept.chmod(0o666)
    calls = scans(monkeypatch)
    assert names(discovery.find_plugins(GROUP)) == [("fake_one_plugin", "fake-one", "1.0")]
    assert calls == [GROUP]


def test_another_distribution_finder_turns_keeping_off(site: Path, monkeypatch) -> None:
    class ZipFinder:
        @staticmethod
        def find_distributions(context=None):
            return iter(())

    make_dist(site, "fake-one", "fake_one_plugin")
    settle(site)
    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, ZipFinder])
    calls = scans(monkeypatch)
    discovery.find_plugins(GROUP)
    discovery.find_plugins(GROUP)
    assert calls == [GROUP, GROUP]
    assert not discovery.kept_folder().exists()


def test_the_backports_path_finder_keeps_keeping_on(site: Path, monkeypatch) -> None:
    class MetadataPathFinder:  # as importlib_metadata installs it, in place of the standard
        __module__ = "importlib_metadata"
        __qualname__ = "MetadataPathFinder"

        @staticmethod
        def find_distributions(context=None):
            return iter(())

    make_dist(site, "fake-one", "fake_one_plugin")
    settle(site)
    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, MetadataPathFinder()])
    calls = scans(monkeypatch)
    discovery.find_plugins(GROUP)
    discovery.find_plugins(GROUP)
    assert calls == [GROUP]


def test_old_answers_beyond_the_limit_are_removed(site: Path, monkeypatch) -> None:
    monkeypatch.setattr(discovery, "KEPT_FILES", 3)
    make_dist(site, "fake-one", "fake_one_plugin")
    settle(site)
    for i in range(5):
        sys.path.append(str(site / f"missing-{i}"))  # another sys.path, another answer
        discovery.find_plugins(GROUP)
    assert len(list(discovery.kept_folder().glob("*.json"))) == 3
    assert discovery.clear_kept() == 3
    assert list(discovery.kept_folder().glob("*.json")) == []


def test_the_manager_loads_kept_plugins_with_their_distribution(site: Path, monkeypatch) -> None:
    monkeypatch.delenv(DISABLE_AUTOLOAD_ENV, raising=False)
    make_dist(site, "fake-one", "fake_one_plugin")
    settle(site)
    discovery.find_plugins(GROUP)
    calls = scans(monkeypatch)
    pm = create_plugin_manager()
    assert calls == []
    rec = next(r for r in pm.records if r.name == "fake_one_plugin")
    assert rec.loaded and (rec.distribution, rec.version) == ("fake-one", "1.0")
    infos = [i for i in pm.hook.opweave_backend_info() if i["name"] == "fake-one"]
    assert len(infos) == 1


def test_a_fresh_process_finds_the_installed_backends_kept(tmp_path: Path, fresh_python) -> None:
    code = (
        "import sys\n"
        "from importlib import metadata\n"
        "from opweave.plugins import discovery\n"
        "if sys.argv[1] == 'kept':\n"
        "    metadata.entry_points = None  # reading the metadata would fail\n"
        "found = discovery.find_plugins('opweave.plugins')\n"
        "print(sorted((s.entry_point.value, s.distribution) for s in found))\n"
    )
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    settle(cwd)  # sys.path[0] of ``python -c``
    env = {**os.environ, "OPWEAVE_FLAGS": f"compiledir={tmp_path / 'compiledir'}"}
    scanned, kept = (fresh_python(code, how, env=env, cwd=cwd) for how in ("scan", "kept"))
    assert scanned == kept
    assert "('opweave_c.plugin', 'opweave-c')" in kept
    assert "('opweave_python.plugin', 'opweave-python')" in kept
