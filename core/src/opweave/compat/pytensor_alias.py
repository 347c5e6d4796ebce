"""The ``pytensor`` -> ``opweave`` import alias (see :mod:`opweave.compat`).

An import finder on ``sys.meta_path`` answers every ``pytensor`` and ``pytensor.X.Y`` import
with the module ``opweave`` / ``opweave.X.Y`` itself (the same module object, so
``pytensor.tensor.TensorVariable is opweave.tensor.TensorVariable``). A PyTensor module path
that opweave does not have fails as a normal ``ModuleNotFoundError`` naming both paths.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from types import ModuleType

from opweave.compat.absent_backend import stand_in_module
from opweave.compat.pytensor_flags import apply_pytensor_flags

__all__ = [
    "ENVIRONMENT_SWITCH",
    "PyTensorAliasError",
    "alias_from_environment",
    "pytensor_alias",
    "pytensor_alias_active",
    "remove_pytensor_alias",
]

ALIASED = "pytensor"
TARGET = "opweave"
#: The environment variable that turns the alias on (``1``, ``true``, ``yes`` or ``on``).
ENVIRONMENT_SWITCH = "OPWEAVE_PYTENSOR_ALIAS"


class PyTensorAliasError(ImportError):
    """The alias cannot start: a real PyTensor is importable or already imported."""


def _target_name(fullname: str) -> str:
    return TARGET + fullname[len(ALIASED) :]


def _is_aliased_name(fullname: str) -> bool:
    return fullname == ALIASED or fullname.startswith(ALIASED + ".")


class _AliasLoader(importlib.abc.Loader):
    """Gives the already-imported opweave module for a ``pytensor`` name."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.own_spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        try:
            module = importlib.import_module(self.target)
        except ModuleNotFoundError as error:
            if not _names_target_or_parent(error.name, self.target):
                raise
            stand_in = stand_in_module(spec.name, error)
            if stand_in is not None:
                return stand_in
            raise ModuleNotFoundError(
                f"No module named {spec.name!r}: opweave has no {self.target!r}, which the "
                f"pytensor alias maps it to",
                name=spec.name,
            ) from None
        self.own_spec = module.__spec__
        _mirror_loaded_modules()
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the opweave module ran when it was imported.

        The import system has just set ``module.__spec__`` to the alias's spec; the module
        gets its own back, so that ``importlib.reload`` and ``python -m`` still see opweave.
        """
        module.__spec__ = self.own_spec


def _names_target_or_parent(missing: str | None, target: str) -> bool:
    """Whether the module an import found missing is ``target`` or a package above it."""
    return missing is not None and (target == missing or target.startswith(missing + "."))


def _mirror_loaded_modules() -> None:
    """Give every imported ``opweave.X`` its ``pytensor.X`` name in ``sys.modules``.

    The import system sets a newly loaded submodule as an attribute of its parent package;
    for ``pytensor.tensor.shape`` that would replace the function ``opweave.tensor.shape``
    with the module. A name already in ``sys.modules`` is not loaded again, so nothing is
    replaced.
    """
    for name, module in list(sys.modules.items()):
        if name == TARGET or name.startswith(TARGET + "."):
            sys.modules.setdefault(ALIASED + name[len(TARGET) :], module)


class PyTensorAliasFinder(importlib.abc.MetaPathFinder):
    """The ``sys.meta_path`` entry of the alias."""

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not _is_aliased_name(fullname):
            return None
        name = _target_name(fullname)
        spec = importlib.machinery.ModuleSpec(fullname, _AliasLoader(name), origin=name)
        # A package (opweave or a subpackage) must look like one, or "import pytensor.x.y"
        # would not look for children; ``submodule_search_locations`` marks it.
        target = sys.modules.get(name)
        if target is None or hasattr(target, "__path__"):
            spec.submodule_search_locations = []
        return spec


def _installed_finder() -> PyTensorAliasFinder | None:
    for finder in sys.meta_path:
        if isinstance(finder, PyTensorAliasFinder):
            return finder
    return None


def pytensor_alias_active() -> bool:
    """Whether ``import pytensor`` gives opweave in this process."""
    return _installed_finder() is not None


def _refuse_real_pytensor() -> None:
    loaded = sys.modules.get(ALIASED)
    if loaded is not None and getattr(loaded, "__name__", None) != TARGET:
        raise PyTensorAliasError(
            f"PyTensor is already imported in this process (from "
            f"{getattr(loaded, '__file__', '?')}); the pytensor alias must start before any "
            f"import of pytensor, in a process where PyTensor is not installed"
        )
    spec = importlib.util.find_spec(ALIASED)
    if spec is not None:
        where = spec.origin or ", ".join(spec.submodule_search_locations or []) or "?"
        raise PyTensorAliasError(
            f"A real PyTensor is importable ({where}); the pytensor alias would hide it. "
            f"Run the code in an environment without PyTensor (pip uninstall pytensor), or "
            f"use PyTensor itself there"
        )


def pytensor_alias() -> None:
    """Make ``import pytensor`` (and every ``pytensor.X``) give opweave's modules.

    Idempotent. Call it before anything imports ``pytensor``. Starting it applies
    ``PYTENSOR_FLAGS`` to opweave's configuration
    (:func:`~opweave.compat.pytensor_flags.apply_pytensor_flags`).

    Raises
    ------
    PyTensorAliasError
        When a real PyTensor is importable in this environment or already imported.
    """
    if pytensor_alias_active():
        return
    _refuse_real_pytensor()
    apply_pytensor_flags()
    sys.meta_path.insert(0, PyTensorAliasFinder())


def remove_pytensor_alias() -> None:
    """Undo :func:`pytensor_alias`: drop the finder and the ``pytensor`` module names."""
    finder = _installed_finder()
    if finder is not None:
        sys.meta_path.remove(finder)
    for name in [n for n in sys.modules if _is_aliased_name(n)]:
        del sys.modules[name]


def alias_from_environment() -> bool:
    """Start the alias when :data:`ENVIRONMENT_SWITCH` says so; whether it is active."""
    if os.environ.get(ENVIRONMENT_SWITCH, "").strip().lower() in {"1", "true", "yes", "on"}:
        pytensor_alias()
    return pytensor_alias_active()
