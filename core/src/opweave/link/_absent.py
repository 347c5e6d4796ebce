"""Errors for what is missing here: parts of PyTensor's ``pytensor.link`` that opweave
does not have, and backends that are not installed.

opweave keeps PyTensor's module paths for what it has, as thin re-exports (in the core,
or served by the backend that has the thing, see :mod:`opweave.plugins.module_paths`);
importing a module or a name it deliberately lacks raises an :class:`ImportError` whose
message names the opweave equivalent, instead of a bare "No module named ...".

A backend's object that may travel in a pickle (a per-chunk kernel in a Dask graph, say)
pickles as a call of :func:`rebuild` naming its distribution, so that loading it where
that distribution is not installed says what to install (:func:`absent_distribution`).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

__all__ = [
    "absent_distribution",
    "absent_module",
    "absent_name",
    "rebuild",
]


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


def absent_distribution(module: str, distribution: str, what: str) -> ModuleNotFoundError:
    """The error for needing ``module`` of ``distribution`` where it is not installed.

    Parameters
    ----------
    module
        The missing module.
    distribution
        The distribution that provides it (what ``pip install`` takes).
    what
        What needed it (completes "... needs the module ...").

    Returns
    -------
    ModuleNotFoundError
        Its ``name`` is ``module``; the message says ``pip install <distribution>``.
    """
    return ModuleNotFoundError(
        f"{what} needs the module {module!r} of the {distribution} distribution, which is not "
        f"installed here: pip install {distribution}",
        name=module,
    )


def rebuild(distribution: str, module: str, qualname: str, args: tuple[Any, ...] | None) -> Any:
    """What a backend's object is unpickled through: ``module.qualname(*args)``, or the
    object ``module.qualname`` itself when ``args`` is ``None``.

    An object of a plugin distribution pickles as this call (its ``__reduce__`` returns
    ``(rebuild, (distribution, module, qualname, args))``, with ``args`` holding no object
    of the distribution's own modules): pickle then finds ``rebuild`` in the core, and a
    process without the distribution gets an error naming what to install instead of
    "No module named ...".

    Parameters
    ----------
    distribution
        The distribution providing ``module`` (what ``pip install`` takes).
    module
        The module defining the object.
    qualname
        The object's qualified name in ``module`` (``"Class.method"`` allowed).
    args
        The arguments to call it with, or ``None`` to return it uncalled.

    Raises
    ------
    ModuleNotFoundError
        When ``module`` (or a package above it) cannot be found: the message names
        ``distribution`` (:func:`absent_distribution`).
    """
    try:
        found: Any = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        missing = exc.name or module
        if module != missing and not module.startswith(missing + "."):
            raise  # a module the distribution itself needs: its own error says which
        raise absent_distribution(module, distribution, f"unpickling {module}.{qualname}") from exc
    for part in qualname.split("."):
        found = getattr(found, part)
    return found if args is None else found(*args)
