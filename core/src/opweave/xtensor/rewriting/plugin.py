"""The ``lower_xtensor`` phase: xtensor Ops become tensor Ops before anything else runs.

:func:`register_xtensor_lowering` is called by the core's standard rewrites
(:func:`opweave.tensor.rewriting.plugin.register_standard_rewrites`), so every
compilation, in every mode, lowers the xtensor Ops of its graph:

=================================== =================== ==============================
entry                               where               tags
=================================== =================== ==============================
``lower_xtensor``                   own phase, 0.09     fast_run, fast_compile,
(an equilibrium of every area's                         minimum_compile
``LOWERINGS``)
``inline_ofg_expansion_xtensor``    own phase, 0.091    fast_run, fast_compile
``useless_tensor_from_xtensor``,    ``canonicalize``    fast_run, useless
``useless_xtensor_from_tensor``
=================================== =================== ==============================

Each area module of :mod:`opweave.xtensor.rewriting` lists its node rewriters in a
``LOWERINGS`` tuple; there is no registry to add to.
"""

from __future__ import annotations

from opweave.compile.builders_rewrites import inline_ofg_expansion
from opweave.graph.rewriting import RewriteDatabase
from opweave.graph.rewriting.db import EquilibriumDB
from opweave.graph.rewriting.graph import in2out
from opweave.xtensor.rewriting import (
    basic,
    indexing,
    math,
    random_variable,
    reduction,
    shape,
    vectorization,
)

__all__ = ["LOWERING_MODULES", "register_xtensor_lowering"]

#: The modules whose ``LOWERINGS`` make up the ``lower_xtensor`` phase.
LOWERING_MODULES = (basic, math, vectorization, shape, reduction, indexing, random_variable)

#: Tags of the lowering phase and of each of its entries: every mode runs them.
_TAGS = ("fast_run", "fast_compile", "minimum_compile")


def register_xtensor_lowering(db: RewriteDatabase) -> None:
    """Register the ``lower_xtensor`` phase (and the cast cleanups) into ``db``.

    Parameters
    ----------
    db
        The database being built for one compilation (with the standard phases).
    """
    # The phase is registered first, so that its entries are tagged with its name too:
    # PyMC selects them with ``optdb.query("+lower_xtensor")``.
    db.register("lower_xtensor", EquilibriumDB(ignore_newtrees=False), *_TAGS, position=0.09)
    lowering = db["lower_xtensor"]
    for module in LOWERING_MODULES:
        for rewriter in module.LOWERINGS:
            name = getattr(rewriter, "__name__", None) or str(rewriter)
            lowering.register(name, rewriter, *_TAGS, "infer_shape")
    db.register(
        "inline_ofg_expansion_xtensor",
        in2out(inline_ofg_expansion, name="inline_ofg_expansion_xtensor"),
        "fast_run",
        "fast_compile",
        position=0.091,
    )
    for rewriter in basic.USELESS_CASTS:
        db["canonicalize"].register(rewriter.__name__, rewriter, "fast_run", "useless")
