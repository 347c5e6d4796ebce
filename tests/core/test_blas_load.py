"""BLAS threads that follow the machine's load: the rule, and the shared state's layout
(what a compile fills in: ``tests/core/test_threads.py``)."""

from __future__ import annotations

import pytest

from opweave.link.blas_load import LOADAVG, BlasLoad, blas_load, threads_for_load


@pytest.mark.parametrize(
    ("limit", "running", "current", "usable", "online", "want"),
    [
        (2, 1, 2, 2, 2, 2),  # quiet: only the caller runs
        (2, 2, 2, 2, 2, 2),  # quiet: the caller and its BLAS worker
        (2, 3, 2, 2, 2, 1),  # one other process
        (2, 4, 2, 2, 2, 1),  # two busy processes on two CPUs
        (2, 3, 1, 2, 2, 1),  # still two others once down to one thread
        (2, 1, 1, 2, 2, 2),  # they are gone: back to the limit
        (4, 3, 1, 4, 4, 2),  # two others of four CPUs leave two
        (2, 60, 2, 2, 64, 1),  # a big shared host: its load spread over every CPU
        (2, 12, 2, 2, 64, 2),  # ... and a light one
        (8, 1, 1, 16, 16, 8),  # never above the limit
        (1, 100, 1, 1, 1, 1),  # never below one
    ],
)
def test_the_rule(
    limit: int, running: int, current: int, usable: int, online: int, want: int
) -> None:
    assert threads_for_load(limit, running, current, usable, online) == want


def test_the_state_has_the_c_layout() -> None:
    names = [name for name, _ in BlasLoad._fields_]
    assert names[:7] == [
        "enabled",
        "limit",
        "current",
        "usable",
        "online",
        "raise_votes",
        "n_setters",
    ]
    assert blas_load() is blas_load()
    assert blas_load().path.decode() == LOADAVG
