"""opweave's conformance kit: test your Types, Ops and backends against its contracts.

::

    from opweave.testing import check_backend, check_op, check_type

    check_type(my_type, good_values=[...], bad_values=[...], downcast_values=[...])
    check_op(my_op, [np.ones((2, 3))])
    check_backend("mylinker")

Each check raises :class:`ContractViolation` (an ``AssertionError``, so pytest reports a
failure) at the first broken rule, naming the rule, the values and what the contract says;
it returns a :class:`CheckReport` of the rules it verified and those that did not apply.

**The pytest plugin.** ``opweave.testing.pytest_plugin`` is published under pytest's
``pytest11`` entry-point group by the opweave distribution, so that its fixtures
(``opweave_linkers``, ``opweave_check_type``, ``opweave_check_op``,
``opweave_check_backend``) are there in every project that has opweave installed, with no
``conftest.py`` to write and no ``pytest_plugins`` line to remember, exactly as a plugin's
tests should see them. The cost is kept to nothing elsewhere: pytest is not a dependency of
opweave; ``import opweave`` imports neither this package nor pytest; this package imports no
pytest either (only the plugin module does, and only pytest loads it). Where the plugin is
loaded it imports opweave, which the tests of an opweave plugin do anyway. Disable it with
``-p no:opweave``.

This package sits on the top floor of the core (it compiles functions and builds tensor
graphs); it is not re-exported by ``opweave`` itself, to keep ``import opweave`` light.
"""

from opweave.testing.backends import check_backend
from opweave.testing.errors import CheckReport, ContractViolation
from opweave.testing.graphs import STANDARD_GRAPHS, Case
from opweave.testing.linkers import usable_linkers
from opweave.testing.ops import check_op, default_inputs
from opweave.testing.types import check_type

__all__ = [
    "STANDARD_GRAPHS",
    "Case",
    "CheckReport",
    "ContractViolation",
    "check_backend",
    "check_op",
    "check_type",
    "default_inputs",
    "usable_linkers",
]
