"""opweave's pytest plugin (entry point ``pytest11``: ``opweave``): the kit as fixtures.

Fixtures
--------
opweave_linkers
    The names of the CPU linkers usable here (``py``, ``vm``, and those of the
    other installed backends usable here), restricted by ``--opweave-linkers=py,cvm`` when given.
opweave_check_type, opweave_check_op, opweave_check_backend
    :func:`opweave.testing.check_type`, :func:`~opweave.testing.check_op` (running on
    ``opweave_linkers`` unless told otherwise) and :func:`~opweave.testing.check_backend`.

Loading the plugin imports ``opweave`` (the package holding it), as any test of an opweave
plugin does anyway; ``-p no:opweave`` turns it off.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import pytest

from opweave.testing import check_backend, check_op, check_type
from opweave.testing.linkers import usable_linkers


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--opweave-linkers``: the linkers the fixtures run on (comma-separated)."""
    group = parser.getgroup("opweave", "opweave conformance kit")
    group.addoption(
        "--opweave-linkers",
        default=None,
        help="comma-separated linkers for opweave_linkers/opweave_check_op "
        "(default: every usable CPU linker)",
    )


@pytest.fixture(scope="session")
def opweave_linkers(pytestconfig: pytest.Config) -> list[str]:
    """The usable CPU linkers (``--opweave-linkers`` restricts them; unknown names fail)."""
    usable = usable_linkers()
    asked = pytestconfig.getoption("--opweave-linkers")
    if not asked:
        return usable
    names = [n.strip() for n in asked.split(",") if n.strip()]
    unknown = [n for n in names if n not in usable]
    if unknown:
        raise pytest.UsageError(
            f"--opweave-linkers names {unknown}, not usable here; usable: {usable}"
        )
    return names


@pytest.fixture
def opweave_check_type() -> Callable[..., Any]:
    """:func:`opweave.testing.check_type`."""
    return check_type


@pytest.fixture
def opweave_check_op(opweave_linkers: list[str]) -> Callable[..., Any]:
    """:func:`opweave.testing.check_op`, on ``opweave_linkers`` unless ``linkers=`` is given."""
    return functools.partial(check_op, linkers=opweave_linkers)


@pytest.fixture
def opweave_check_backend() -> Callable[..., Any]:
    """:func:`opweave.testing.check_backend`."""
    return check_backend
