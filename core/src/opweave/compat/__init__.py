"""Running code written for PyTensor on opweave, unmodified.

opweave mirrors PyTensor's public module layout (``pytensor.tensor.math`` is
``opweave.tensor.math``), so code written for PyTensor, PyMC included, runs on opweave once
``import pytensor...`` gives opweave's modules. This package provides that opt-in alias:

- in code: ``opweave.compat.pytensor_alias()`` before the first ``import pytensor``;
- from the command line, for a script or a module that must not be edited::

      python -m opweave.compat my_model.py --its-args
      python -m opweave.compat -m pytest tests/
      python -m opweave.compat -c "import pymc; print(pymc.__version__)"

- in a whole environment: ``OPWEAVE_PYTENSOR_ALIAS=1`` makes ``python -m opweave.compat``'s
  children (and any process that calls :func:`alias_from_environment`) alias too.

The alias refuses to start when a real PyTensor is importable or already imported in the
same process: two packages under one name would mix graphs of both.
"""

from __future__ import annotations

from opweave.compat.pytensor_alias import (
    ENVIRONMENT_SWITCH,
    PyTensorAliasError,
    alias_from_environment,
    pytensor_alias,
    pytensor_alias_active,
    remove_pytensor_alias,
)

__all__ = [
    "ENVIRONMENT_SWITCH",
    "PyTensorAliasError",
    "alias_from_environment",
    "pytensor_alias",
    "pytensor_alias_active",
    "remove_pytensor_alias",
]
