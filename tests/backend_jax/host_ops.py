"""An Op the jax linker has no lowering for (every core scalar Op has one): a user's
scalar Op with only a Python ``impl``, as a plugin might define."""

from __future__ import annotations

from typing import Any

import numpy as np

from opweave.scalar.basic import BinaryScalarOp, upgrade_to_float_no_complex
from opweave.tensor.elemwise import Elemwise


class HostHypot(BinaryScalarOp):
    """``hypot(v, x)``, computed by NumPy only."""

    def impl(self, v: Any, x: Any) -> Any:
        return np.hypot(v, x)


#: The elementwise form, ``host_hypot(v, x)``.
host_hypot = Elemwise(HostHypot(upgrade_to_float_no_complex, name="host_hypot"))
