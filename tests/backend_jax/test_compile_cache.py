"""JAX's persistent compilation cache under ``compiledir`` (``jax__compilation_cache``).

JAX reads its cache settings once per process, so each case runs a fresh Python process
that compiles ``exp(x) * y + z`` with the ``jax`` linker and reports what JAX was set to
and whether it found the executable in the cache.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

from opweave_jax.compile_cache import cache_folder, unsafe_folder

#: Compiles and calls a small graph; prints JAX's cache settings and cache events as JSON.
PROBE = """
import json, warnings
import numpy as np
import jax
events = []
jax.monitoring.register_event_listener(lambda name, **kw: events.append(name))
import opweave, opweave.tensor as ot
x, y, z = ot.dvectors("x", "y", "z")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    f = opweave.function([x, y, z], ot.exp(x) * y + z, mode="JAX")
out = f(np.zeros(3), np.ones(3), np.full(3, 2.0))
print(json.dumps({
    "out": out.tolist(),
    "dir": jax.config.jax_compilation_cache_dir,
    "min_time": jax.config.jax_persistent_cache_min_compile_time_secs,
    "min_size": jax.config.jax_persistent_cache_min_entry_size_bytes,
    "hits": events.count("/jax/compilation_cache/cache_hits"),
    "misses": events.count("/jax/compilation_cache/cache_misses"),
    "warnings": [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)],
}))
"""


def _probe(compiledir: Path, flags: str = "", **env: str) -> dict[str, Any]:
    """Run :data:`PROBE` in a new process with ``compiledir`` and ``flags``."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("JAX_COMPILATION")}
    environ["JAX_PLATFORMS"] = "cpu"
    environ["OPWEAVE_FLAGS"] = ",".join(
        f for f in (f"compiledir={compiledir}", "compile__tiered=False", flags) if f
    )
    environ.update(env)
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, env=environ, timeout=300
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["out"] == [3.0, 3.0, 3.0]
    return result


def test_a_second_process_loads_the_executable_from_the_cache(tmp_path: Path) -> None:
    first = _probe(tmp_path)
    folder = tmp_path / "jax"
    assert first["dir"] == str(folder)
    assert (first["min_time"], first["min_size"]) == (0.0, -1)
    assert first["misses"] >= 1 and first["hits"] == 0
    assert any(folder.iterdir())
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    second = _probe(tmp_path)
    assert second["hits"] >= 1 and second["misses"] == 0


def test_a_cache_directory_the_user_gave_jax_is_left_alone(tmp_path: Path) -> None:
    theirs = tmp_path / "theirs"
    found = _probe(tmp_path / "compiledir", JAX_COMPILATION_CACHE_DIR=str(theirs))
    assert found["dir"] == str(theirs)
    assert found["min_time"] == 1.0  # JAX's default threshold, not changed
    assert not (tmp_path / "compiledir" / "jax").exists()


def test_the_flag_turns_the_cache_off(tmp_path: Path) -> None:
    found = _probe(tmp_path, "jax__compilation_cache=False")
    assert found["dir"] is None
    assert not (tmp_path / "jax").exists()


def test_a_folder_others_can_write_to_is_not_used_and_says_why(tmp_path: Path) -> None:
    folder = tmp_path / "jax"
    folder.mkdir()
    folder.chmod(0o777)
    found = _probe(tmp_path)
    assert found["dir"] is None
    (message,) = [w for w in found["warnings"] if "compilation cache" in w]
    assert "writable by group or others" in message and "jax__compilation_cache" in message
    assert list(folder.iterdir()) == []


def test_the_cache_folder_is_made_for_its_owner_only(tmp_path: Path) -> None:
    folder = cache_folder(tmp_path)
    assert folder == tmp_path / "jax"
    assert unsafe_folder(folder) is None
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    folder.chmod(0o770)
    problem = unsafe_folder(folder)
    assert problem is not None and str(folder) in problem


def test_a_file_in_place_of_the_folder_is_unsafe(tmp_path: Path) -> None:
    (tmp_path / "jax").write_text("")
    problem = unsafe_folder(tmp_path / "jax")
    assert problem is not None and "cannot be made" in problem
