"""``PYTENSOR_FLAGS`` under the ``pytensor`` alias: PyTensor's configuration variable,
read as opweave's.

A program run through the alias was often configured for PyTensor: ``PYTENSOR_FLAGS=
floatX=float32`` must not leave it computing in float64 without a word. When the alias
starts, each ``name=value`` item of ``PYTENSOR_FLAGS`` sets opweave's flag of that name
(opweave's flags have PyTensor's names: ``floatX``, ``mode``, ``linker``, ``device``,
``compiledir``, ...), and :meth:`opweave.configuration.Config.source` then says
``PYTENSOR_FLAGS``. ``OPWEAVE_FLAGS`` wins for a flag both name. An item opweave has no flag
for, or whose value opweave's flag refuses (a PyTensor linker opweave does not have), is
left out with one ``RuntimeWarning`` naming it and why.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping

from opweave.configdefaults import config
from opweave.configuration import ENV_VAR, UnknownFlagError, parse_env_flags

__all__ = ["PYTENSOR_ENV_VAR", "apply_pytensor_flags"]

#: PyTensor's configuration variable.
PYTENSOR_ENV_VAR = "PYTENSOR_FLAGS"


def apply_pytensor_flags(environ: Mapping[str, str] | None = None) -> list[str]:
    """Set opweave's flags from ``PYTENSOR_FLAGS`` (those ``OPWEAVE_FLAGS`` does not set).

    Parameters
    ----------
    environ
        The environment; default: :data:`os.environ`.

    Returns
    -------
    list of str
        The names of the flags set.

    Raises
    ------
    ValueError
        For a malformed ``PYTENSOR_FLAGS`` (an item without ``=``), naming it.

    Warns
    -----
    RuntimeWarning
        Naming the items left out: flags opweave does not have, values it refuses.
    """
    environ = os.environ if environ is None else environ
    text = environ.get(PYTENSOR_ENV_VAR, "")
    if not text.strip():
        return []
    own = {name for name, _ in parse_env_flags(environ.get(ENV_VAR, ""))}
    set_names: list[str] = []
    left_out: list[str] = []
    for name, value in parse_env_flags(text, PYTENSOR_ENV_VAR):
        if name in own:
            continue
        try:
            config.set_from(name, value, PYTENSOR_ENV_VAR)
        except UnknownFlagError:
            left_out.append(f"{name} (opweave has no such flag)")
        except ValueError as exc:
            left_out.append(f"{name}={value} ({exc})")
        else:
            set_names.append(name)
    if left_out:
        warnings.warn(
            f"{PYTENSOR_ENV_VAR}: left out {'; '.join(left_out)}. Set opweave's flags with "
            f"{ENV_VAR} (python -m opweave info lists them)",
            RuntimeWarning,
            stacklevel=3,  # the caller of pytensor_alias()
        )
    return set_names
