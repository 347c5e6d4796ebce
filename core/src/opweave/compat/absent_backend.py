"""Stand-ins for PyTensor's backend modules that no installed plugin serves.

PyTensor keeps its backends under ``pytensor.link`` (``pytensor.link.jax``,
``pytensor.link.numba`` ...), and code written for it imports names from there even when it
does not use that backend (PyMC's ``from pytensor.link.numba import NumbaLinker`` to test
``isinstance(linker, NumbaLinker)``). Under the alias, such a path is opweave's
``opweave.link.<name>``, which exists only when a plugin serves it (opweave-jax serves
``opweave.link.jax``). When none does, the alias gives a stand-in module instead of failing
the import: every name imported from it is
a class that no object is an instance of, and that raises the original
:class:`ModuleNotFoundError` (saying how to get the backend) when it is called or when one
of its attributes is used.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, NoReturn

__all__ = ["BACKEND_PACKAGE", "stand_in_module"]

#: PyTensor's package of backends: only its missing submodules get a stand-in.
BACKEND_PACKAGE = "pytensor.link."


class _AbsentName(type):
    """The metaclass of the stand-in names: a missing attribute raises the module's error."""

    _absent_message: str

    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise ModuleNotFoundError(cls._absent_message)


def _stand_in_name(module: str, name: str, message: str) -> type:
    def refuse(cls: type, *args: Any, **kwargs: Any) -> NoReturn:
        raise ModuleNotFoundError(message)

    namespace = {
        "__new__": refuse,
        "__module__": module,
        "__doc__": f"Stand-in for {module}.{name}: {message}",
        "_absent_message": message,
    }
    return _AbsentName(name, (), namespace)


class _StandInModule(ModuleType):
    """A module whose every public name is a stand-in class."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(name, f"Stand-in for PyTensor's {name}: {message}")
        self.__path__: list[str] = []  # a package: its submodules get stand-ins too
        self.__all__: list[str] = []
        self._absent_message = message

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        value = _stand_in_name(self.__name__, name, self._absent_message)
        setattr(self, name, value)
        return value


def stand_in_module(name: str, error: ModuleNotFoundError) -> ModuleType | None:
    """A stand-in for the PyTensor backend module ``name``, or ``None`` when ``name`` is not
    under PyTensor's ``pytensor.link`` package (other missing paths stay import errors).

    Parameters
    ----------
    name
        The PyTensor module path imported (``"pytensor.link.numba.dispatch"``).
    error
        Why opweave's module is absent: its message is what using a name raises.
    """
    if not name.startswith(BACKEND_PACKAGE):
        return None
    return _StandInModule(name, str(error))
