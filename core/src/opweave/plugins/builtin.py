"""The core's own plugin: what opweave provides through the same hooks a third party uses."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from opweave.plugins.hookspecs import hookimpl

#: The core's standard rewrites: ``register(db)`` of the tensor library
#: (:func:`opweave.tensor.rewriting.plugin.register_standard_rewrites`), which
#: ``import opweave`` gives through :func:`provide_standard_rewrites` (the tensor library
#: sits above the plugin layer). Empty until then.
_standard_rewrites: list[Callable[[Any], None]] = []


def provide_standard_rewrites(register: Callable[[Any], None]) -> None:
    """Make ``register(db)`` the core's standard rewrites, which this plugin's
    ``opweave_rewrites`` hook registers into each rewrite database.

    ``import opweave`` calls it once, with
    :func:`opweave.tensor.rewriting.plugin.register_standard_rewrites`.

    Parameters
    ----------
    register
        Registers the standard rewrites into the database it is given.
    """
    _standard_rewrites[:] = [register]


@hookimpl(trylast=True)
def opweave_transfer(var: Any, target: str) -> Any:
    """Built-in target ``'cpu'``: host values stay where they are.

    Plugins whose Types live elsewhere (GPU arrays) are asked first and answer
    for their own variables.
    """
    if target == "cpu":
        return var
    return None


@hookimpl
def opweave_rewrites(db: Any) -> None:
    """The core's standard rewrites (constant folding, canonicalization, shapes, fusion,
    in-place), registered like any plugin's: see :mod:`opweave.tensor.rewriting.plugin`.

    Raises
    ------
    RuntimeError
        While ``import opweave`` has not given them yet (a database built during that
        import).
    """
    if not _standard_rewrites:
        raise RuntimeError(
            "the core's standard rewrites are not known yet: `import opweave` gives them "
            "(opweave.tensor.rewriting.plugin) when it completes"
        )
    _standard_rewrites[0](db)
