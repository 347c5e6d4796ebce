"""The configuration flags of the C backend, registered through ``opweave_addoption``.

They read like the core's flags (``opweave.config.cxx``, ``OPWEAVE_FLAGS=cxx=clang``,
``[tool.opweave] cxx = ...``, ``[tool.opweave.gcc] cxxflags = ...``); values given before
the plugin is loaded wait until it registers them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from opweave.configuration import BoolParam, Config, IntParam, StrParam

__all__ = ["add_c_options"]


def add_c_options(config: Config, environ: Mapping[str, str] | None = None) -> None:
    """Register the C backend's flags on ``config``.

    Parameters
    ----------
    config
        The configuration (``opweave.config``, or one made by ``build_config``).
    environ
        Environment used for defaults (``CC``); default: :data:`os.environ`.
    """
    environ = os.environ if environ is None else environ
    config.add(
        "cxx",
        "C compiler command used by C-generating linkers.\n\n"
        "Defaults to the ``CC`` environment variable, else ``cc``.",
        StrParam(environ.get("CC") or "cc"),
    )
    config.add(
        "gcc__cxxflags",
        "Extra flags passed to the C compiler, as one shell-style string.",
        StrParam(""),
    )
    config.add(
        "c__build_jobs",
        "How many C modules may be built at once when a graph's functions are split over\n"
        "several (one compiler process each); 0 means as many as the CPUs this process may\n"
        "use (its affinity, bounded by its cgroup CPU quota).",
        IntParam(0, minimum=0),
    )
    config.add(
        "c__vector_math",
        "Whether C loops may call glibc's vector math library (libmvec) for ``exp``, ``log``,\n"
        "``tanh``... on processors with AVX2: several times faster, with results within 4 ulp\n"
        "of the correctly rounded ones (the scalar C library is within 1). NaN, infinities\n"
        "and signed zeros are the same either way.",
        BoolParam(True),
    )
    config.add(
        "openmp",
        "Whether C backends may run large elementwise loops on several threads (OpenMP;\n"
        "``openmp__threads`` sets their number). Off by default, as in\n"
        "PyTensor: threads compete with a multi-threaded BLAS and with other processes, and a\n"
        "process forked after OpenMP started its threads must not use them.",
        BoolParam(False),
    )
    config.add(
        "openmp_elemwise_minsize",
        "With ``openmp``, the fewest elements an elementwise loop of one cheap operation\n"
        "(``+``, ``*``...) must have to run on several threads; a fused loop needs\n"
        "proportionally fewer (each call such as ``exp`` or ``tanh`` counting as 8).",
        IntParam(200000, minimum=1),
    )
