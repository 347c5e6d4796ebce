"""Errors for the parts of PyTensor's ``pytensor.link`` that opweave does not have.

opweave keeps PyTensor's module paths for what it has, as thin re-exports
(``opweave.link.c.interface``, ``opweave.link.c.op``, ``opweave.link.c.type``); importing a
module or a name it deliberately lacks raises an :class:`ImportError` whose message names
the opweave equivalent, instead of a bare "No module named ...".
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["FOREIGN_BACKEND_ADVICE", "absent_module", "absent_name"]

#: What to use instead of a PyTensor backend that opweave does not ship.
FOREIGN_BACKEND_ADVICE = (
    "opweave compiles graphs with its own backends, found through plugins: the C backend "
    "(the opweave-c distribution, package opweave_c: mode='FAST_RUN', linker 'cvm' (compiled "
    "C, Python where an Op has no C) or 'c'), the Python one (opweave-python: linkers 'py' "
    "and 'vm') and the CUDA one (opweave-cuda: linker 'cuda'). `python -m opweave info` "
    "lists the linkers installed here; a new backend is one plugin distribution (see "
    "'A new backend' in docs/architecture.md)."
)


def absent_module(module: str, what: str, instead: str) -> ModuleNotFoundError:
    """The error for importing ``module``, a PyTensor module opweave does not have.

    Parameters
    ----------
    module
        The opweave module name (PyTensor's, with ``opweave`` for ``pytensor``).
    what
        What the PyTensor module is (completes "``pytensor...`` is ...").
    instead
        Where the opweave equivalent is.

    Returns
    -------
    ModuleNotFoundError
        To be raised by the module's body; its ``name`` is ``module``.
    """
    pytensor_name = "pytensor" + module.removeprefix("opweave")
    return ModuleNotFoundError(
        f"{module} does not exist ({pytensor_name} is {what}). {instead}", name=module
    )


def absent_name(module: str, name: str, hints: Mapping[str, str]) -> ImportError | AttributeError:
    """The error for getting ``name`` from ``module`` when the module does not define it.

    Parameters
    ----------
    module
        The opweave module name.
    name
        The attribute asked for.
    hints
        PyTensor names that opweave deliberately lacks in ``module`` -> what to use instead
        (one or more sentences).

    Returns
    -------
    ImportError or AttributeError
        An :class:`ImportError` naming the equivalent for a name of ``hints`` (so that
        ``from module import name`` shows it), else the usual :class:`AttributeError`.
    """
    hint = hints.get(name)
    if hint is None:
        return AttributeError(f"module {module!r} has no attribute {name!r}")
    pytensor_name = "pytensor" + module.removeprefix("opweave") + "." + name
    return ImportError(
        f"cannot import name {name!r} from {module!r}: opweave has no {pytensor_name}. {hint}",
        name=module,
    )
