"""Test what users install: built sdists and wheels, installed non-editable.

Every distribution is built into an sdist and a wheel *from that sdist* (``python -m
build``), so a file missing from the sdist breaks the wheel too. Their contents are
checked, then five combinations are installed into fresh venvs, offline from the built
wheels and a wheelhouse of their third-party requirements, and ``smoke.py`` runs in each
from a directory outside the repository: core alone; core + opweave-python;
core + opweave-c; everything but Dask; core + opweave-dask.

The wheelhouse (``build/wheelhouse`` under the repository) is filled by ``pip download``
with the third-party requirements the distributions' ``pyproject.toml`` files name, and
reused by later runs while they name the same; the built distributions go to a temporary folder.
"""

from __future__ import annotations

import email.parser
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SMOKE = Path(__file__).with_name("smoke.py")
WHEELHOUSE = REPO / "build" / "wheelhouse"

#: folder -> (distribution name, import name)
DISTRIBUTIONS = {
    "core": ("opweave", "opweave"),
    "backend-python": ("opweave-python", "opweave_python"),
    "backend-c": ("opweave-c", "opweave_c"),
    "backend-cuda": ("opweave-cuda", "opweave_cuda"),
    "backend-dask": ("opweave-dask", "opweave_dask"),
    "backend-jax": ("opweave-jax", "opweave_jax"),
    "plugins/opweave-double": ("opweave-double", "opweave_double"),
}
#: What each combination asks pip for (pip resolves the rest from the built wheels).
COMBINATIONS = {
    "core": ["opweave"],
    "python": ["opweave-python"],
    "c": ["opweave-c"],
    "all": ["opweave-c", "opweave-cuda", "opweave-double"],
    "dask": ["opweave-dask"],
    "jax": ["opweave-jax"],
}


def _third_party_requirements() -> list[str]:
    """The requirements of every distribution (from its pyproject.toml) that are not ours."""
    ours = {name for name, _ in DISTRIBUTIONS.values()}
    found: dict[str, None] = {}
    for folder in DISTRIBUTIONS:
        with open(REPO / folder / "pyproject.toml", "rb") as f:
            project = tomllib.load(f)["project"]
        for requirement in project.get("dependencies", []):
            name = re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0].strip().lower()
            if name not in ours:
                found[requirement] = None
    return list(found)


#: Third-party requirements of every distribution, downloaded into the wheelhouse.
THIRD_PARTY = _third_party_requirements()

pytestmark = pytest.mark.wheels


def _run(cmd: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(cmd, capture_output=True, text=True, check=False, **kwargs)  # type: ignore[call-overload]
    if result.returncode != 0:
        pytest.fail(f"{' '.join(map(str, cmd))} failed:\n{result.stdout}\n{result.stderr}")
    return result


@pytest.fixture(scope="module")
def dist_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every distribution built into an sdist, and a wheel built from that sdist.

    Each is built from a clean copy of its folder: an editable install leaves
    ``*.egg-info/SOURCES.txt`` behind, which setuptools would otherwise reuse and so ship
    files that a fresh clone's build leaves out.
    """
    out = tmp_path_factory.mktemp("dist")
    sources = tmp_path_factory.mktemp("sources")
    skip = shutil.ignore_patterns("*.egg-info", "build", "dist", "__pycache__", "*.pyc")
    for folder in DISTRIBUTIONS:
        copy = sources / folder
        shutil.copytree(REPO / folder, copy, ignore=skip)
        _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(copy)])
    return out


@pytest.fixture(scope="module")
def wheelhouse() -> Path:
    """Wheels of the third-party requirements, downloaded once and reused."""
    WHEELHOUSE.mkdir(parents=True, exist_ok=True)
    stamp = WHEELHOUSE / "requirements.txt"  # what the wheels there were downloaded for
    wanted = "\n".join(THIRD_PARTY) + "\n"
    if not stamp.is_file() or stamp.read_text() != wanted:
        _run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--only-binary=:all:",
                "--dest",
                str(WHEELHOUSE),
                *THIRD_PARTY,
            ]
        )
        stamp.write_text(wanted)
    return WHEELHOUSE


def _wheel(dist_dir: Path, import_name: str) -> Path:
    (found,) = dist_dir.glob(f"{import_name}-*.whl")
    return found


def _sdist(dist_dir: Path, import_name: str) -> Path:
    (found,) = dist_dir.glob(f"{import_name}-*.tar.gz")
    return found


def _metadata(wheel: Path) -> email.message.Message:
    with zipfile.ZipFile(wheel) as zf:
        (name,) = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        return email.parser.Parser().parsestr(zf.read(name).decode())


@pytest.mark.parametrize("folder", list(DISTRIBUTIONS))
def test_wheel_and_sdist_ship_what_the_package_reads(dist_dir: Path, folder: str) -> None:
    _, import_name = DISTRIBUTIONS[folder]
    source = REPO / folder / "src" / import_name
    data = sorted(
        p.relative_to(source).as_posix()
        for p in source.rglob("*")
        if p.is_file() and p.suffix not in (".pyc",) and "__pycache__" not in p.parts
    )
    with zipfile.ZipFile(_wheel(dist_dir, import_name)) as zf:
        in_wheel = set(zf.namelist())
    missing = [f for f in data if f"{import_name}/{f}" not in in_wheel]
    assert missing == [], f"files of {import_name} missing from its wheel: {missing}"
    assert f"{import_name}/py.typed" in in_wheel
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in in_wheel)
    with tarfile.open(_sdist(dist_dir, import_name)) as tf:
        in_sdist = {n.split("/", 1)[1] for n in tf.getnames() if "/" in n}
    for needed in ("README.md", "LICENSE", "pyproject.toml"):
        assert needed in in_sdist, f"{needed} missing from the sdist of {folder}"
    missing = [f for f in data if f"src/{import_name}/{f}" not in in_sdist]
    assert missing == [], f"files of {import_name} missing from its sdist: {missing}"


@pytest.mark.parametrize("folder", list(DISTRIBUTIONS))
def test_metadata_uses_compatible_ranges(dist_dir: Path, folder: str) -> None:
    name, import_name = DISTRIBUTIONS[folder]
    meta = _metadata(_wheel(dist_dir, import_name))
    assert meta["Name"] == name
    assert meta["License-Expression"] == "BSD-3-Clause"
    assert "Typing :: Typed" in meta.get_all("Classifier", [])
    assert len(meta.get_payload()) > 100, "the wheel's description is its README"
    requires = meta.get_all("Requires-Dist", [])
    pinned = [r for r in requires if "==" in r.partition(";")[0]]
    assert pinned == [], f"{name} pins exact versions: {pinned}"
    ours = [r for r in requires if r.startswith("opweave")]
    assert all(">=0.1" in r and "<0.2" in r for r in ours), ours


@pytest.fixture(scope="module")
def venvs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield tmp_path_factory.mktemp("venvs")


@pytest.mark.parametrize("combination", list(COMBINATIONS))
def test_install_combination_keeps_its_promises(
    dist_dir: Path, wheelhouse: Path, venvs: Path, combination: str, tmp_path: Path
) -> None:
    venv = venvs / combination
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--quiet",
            "--no-index",
            "--find-links",
            str(dist_dir),
            "--find-links",
            str(wheelhouse),
            *COMBINATIONS[combination],
        ]
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPWEAVE", "PYTHON"))}
    env["OPWEAVE_FLAGS"] = f"compiledir={tmp_path / 'compiledir'}"
    result = subprocess.run(
        [str(python), str(SMOKE), combination],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        check=False,
    )
    assert result.returncode == 0, f"{result.stdout}\n{result.stderr}"
    assert "FAILED" not in result.stdout
