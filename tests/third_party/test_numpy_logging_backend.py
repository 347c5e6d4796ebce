"""A third-party backend distribution (``tests/third_party/opweave-nplog``) installed from
its wheel next to opweave: its linker, mode, module path and capability column work
without a line of it in the core."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
SOURCE = HERE / "opweave-nplog"
REPO = HERE.parent.parent

RUN = r"""
import json, logging
import numpy as np
import opweave
import opweave.tensor as ot
from opweave.compile.mode import NPLOG
from opweave.link.nplog import NPLogLinker

records = []
handler = logging.Handler()
handler.emit = lambda record: records.append(record.getMessage())
logging.getLogger("opweave_nplog").addHandler(handler)
logging.getLogger("opweave_nplog").setLevel(logging.INFO)

x, w = ot.dmatrix("x"), ot.dvector("w")
out = ot.tanh(ot.dot(x, w)).sum() + ot.exp(w).max()
data, weights = np.arange(6.0).reshape(2, 3) / 7, np.array([0.5, -1.0, 2.0])
logged = opweave.function([x, w], out, mode="NPLOG")
plain = opweave.function([x, w], out, mode=opweave.Mode(linker="vm"))
print(json.dumps({
    "value": float(logged(data, weights)),
    "expected": float(plain(data, weights)),
    "numpy": float(np.tanh(data @ weights).sum() + np.exp(weights).max()),
    "linker": type(logged.maker.linker).__name__,
    "same_class": type(logged.maker.linker) is NPLogLinker,
    "mode_linker": NPLOG.linker.name if hasattr(NPLOG.linker, "name") else str(NPLOG.linker),
    "nodes": len(logged.maker.fgraph.apply_nodes),
    "logged": records,
}))
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """opweave-nplog installed (from the wheel pip builds) into a folder of its own."""
    target = tmp_path_factory.mktemp("nplog-site")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
         "--no-build-isolation", "--target", str(target), str(SOURCE)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return target


def _python(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(site))
    env.pop("OPWEAVE_DISABLE_PLUGIN_AUTOLOAD", None)
    return subprocess.run(
        [sys.executable, *args], env=env, capture_output=True, text=True, timeout=300
    )


def test_its_linker_and_mode_run_a_graph_like_vm(site: Path) -> None:
    done = _python(site, "-c", RUN)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["value"] == found["expected"]
    assert found["value"] == pytest.approx(found["numpy"], rel=1e-14)
    assert found["linker"] == "NPLogLinker" and found["same_class"]
    # every node of the compiled graph ran through the backend's logged kernels
    assert len(found["logged"]) == found["nodes"] > 0
    assert all(message.startswith("nplog ran ") for message in found["logged"])


def test_info_lists_it_with_its_capability_column(site: Path) -> None:
    done = _python(site, "-m", "opweave", "info", "--ops")
    assert done.returncode == 0, done.stderr
    assert "opweave-nplog" in done.stdout and "nplog" in done.stdout


def test_the_core_names_it_nowhere() -> None:
    """The backend needed no edit to the core: no core file mentions it."""
    core = REPO / "core" / "src" / "opweave"
    mentions = [
        str(path.relative_to(REPO))
        for path in core.rglob("*.py")
        if "nplog" in path.read_text(encoding="utf-8").lower()
    ]
    assert mentions == []


def test_its_mode_can_be_the_configured_default(site: Path) -> None:
    code = (
        "import opweave, opweave.tensor as ot\n"
        "x = ot.dvector('x')\n"
        "f = opweave.function([x], ot.exp(x))\n"
        "print(opweave.config.mode, type(f.maker.linker).__name__, f([0.0])[0])\n"
    )
    env_site = str(site)
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=dict(os.environ, PYTHONPATH=env_site, OPWEAVE_FLAGS="mode=NPLOG"),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["NPLOG", "NPLogLinker", "1.0"]
