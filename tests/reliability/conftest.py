"""Reliability tests (DESIGN.md section 7): threads, input classes, leaks, output Types.

The number of generated examples is bounded by default so that the suite stays quick;
``OPWEAVE_RELIABILITY_LONG=1`` in the environment runs many more.

A test that generates examples marks itself ``@pytest.mark.reliability_long(default=N,
long=M)`` and either takes the ``reliability_seed`` argument (it is then parametrized
with the seeds ``0 .. N-1``, or ``0 .. M-1`` in the long run, so every failure's test id
names its seed) or the ``n_examples`` fixture (``N`` or ``M``) to loop over itself.
``pytest -m reliability_long`` selects those tests.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest

#: True when ``OPWEAVE_RELIABILITY_LONG`` is set to anything but ``""`` or ``"0"``.
LONG = os.environ.get("OPWEAVE_RELIABILITY_LONG", "0") not in ("", "0")

#: Examples a ``reliability_long`` test runs when its marker gives no count.
N_EXAMPLES = 200 if LONG else 10


def _count(marker: pytest.Mark | None) -> int:
    if marker is None:
        return N_EXAMPLES
    key = "long" if LONG else "default"
    return int(marker.kwargs.get(key, N_EXAMPLES))


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize ``reliability_seed`` with as many seeds as the test's marker asks."""
    if "reliability_seed" in metafunc.fixturenames:
        marker = metafunc.definition.get_closest_marker("reliability_long")
        metafunc.parametrize("reliability_seed", range(_count(marker)))


@pytest.fixture
def n_examples(request: pytest.FixtureRequest) -> int:
    """How many examples the requesting test generates (from its ``reliability_long`` marker)."""
    return _count(request.node.get_closest_marker("reliability_long"))


@pytest.fixture
def fast_switching() -> Iterator[None]:
    """Switch threads often, so that calls interleave inside the linkers' loops (the
    thread-safety tests use it for every test: ``pytest.mark.usefixtures``)."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)
