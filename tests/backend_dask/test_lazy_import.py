"""Installing opweave-dask costs nothing to users of other linkers: the plugin, the linker
class, ``opweave info`` and the capability matrix import no Dask (nor SciPy, which Dask
drags in); Dask is imported when a ``dask``-linker function is linked."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("dask.array")

from opweave_dask.lazy import LazyBuilder

SCRIPT = r"""
import io
import json
import sys

import numpy as np


def heavy():
    return sorted(
        name
        for name in sys.modules
        if name.split(".")[0] in ("dask", "distributed", "scipy")
        or name
        in (
            "opweave_dask.arrays",
            "opweave_dask.elemwise",
            "opweave_dask.fallback",
            "opweave_dask.inputs",
            "opweave_dask.reductions",
            "opweave_dask.running",
            "opweave_dask.values",
        )
    )


report = {}
import opweave
import opweave.tensor as ot
from opweave.cli import info
from opweave.link.capabilities import capability_matrix
from opweave.link.lookup import available_linkers, resolve_linker
from opweave.plugins.manager import get_plugin_manager

pm = get_plugin_manager()
x = ot.dvector("x")
values = np.arange(4.0)
for linker in ("vm", "auto"):
    f = opweave.function([x], ot.exp(x).sum(), mode=opweave.Mode(linker=linker))
    report[linker] = float(f(values))
linkers = available_linkers()
report["dask_linker"] = linkers["dask"].__module__ + "." + linkers["dask"].__qualname__
report["auto_linker"] = resolve_linker("auto").__name__
infos = pm.hook.opweave_backend_info()
table = next(i["implementations"] for i in infos if i["name"] == "opweave-dask")
report["missing"] = len(table.missing())
report["matrix"] = len(capability_matrix(infos))
out = io.StringIO()
info(out, ops=True)
report["info"] = out.getvalue()
report["before"] = heavy()

f = opweave.function([x], ot.exp(x).sum(), mode=opweave.Mode(linker="dask"))
result = f(values)
report["dask_result_type"] = type(result).__module__
report["dask_value"] = float(result.compute())
report["after"] = heavy()
print(json.dumps(report))
"""


@pytest.fixture(scope="module")
def report() -> dict:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=False, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_other_linkers_info_and_the_matrix_import_no_dask_nor_scipy(report: dict) -> None:
    expected = float(np.exp(np.arange(4.0)).sum())
    assert report["vm"] == pytest.approx(expected)
    assert report["auto"] == pytest.approx(expected)
    assert report["auto_linker"] != "DaskLinker"
    assert report["dask_linker"] == "opweave_dask.linker.DaskLinker"
    assert report["missing"] == 0
    assert report["matrix"] > 0
    assert "opweave-dask: linkers dask; available" in report["info"]
    assert "opweave-dask (dask): " in report["info"]
    assert report["before"] == []


def test_linking_a_dask_function_imports_dask(report: dict) -> None:
    assert "dask" in report["after"]
    assert "dask.array" in report["after"]
    assert "opweave_dask.running" in report["after"]
    assert report["dask_result_type"].startswith("dask.array")
    assert report["dask_value"] == pytest.approx(report["vm"])


def test_a_lazy_builder_imports_its_function_on_first_call() -> None:
    builder = LazyBuilder("opweave_dask.arrays", "build_dot")
    from opweave_dask import arrays

    assert builder.resolve() is arrays.build_dot
    assert builder == LazyBuilder("opweave_dask.arrays", "build_dot")
    assert builder != LazyBuilder("opweave_dask.arrays", "build_join")
    assert "opweave_dask.arrays.build_dot" in repr(builder)


def test_every_table_entry_names_an_existing_builder() -> None:
    from opweave_dask.table import DASK_OPS, ONE_WORKER

    for cls, entry in DASK_OPS.items():
        if entry is ONE_WORKER:
            continue
        assert isinstance(entry, LazyBuilder), cls
        assert callable(entry.resolve()), cls


def test_a_lazy_builder_refuses_bad_names() -> None:
    with pytest.raises(TypeError, match="module must be a non-empty str"):
        LazyBuilder("", "build_dot")
    with pytest.raises(TypeError, match="function must be a non-empty str"):
        LazyBuilder("opweave_dask.arrays", None)  # type: ignore[arg-type]
    with pytest.raises(AttributeError, match="has no builder 'build_nothing'"):
        LazyBuilder("opweave_dask.arrays", "build_nothing").resolve()
