"""The registration of the standard tensor rewrites, called by the core's own plugin.

:mod:`opweave.plugins.builtin` implements the ``opweave_rewrites(db)`` hook by calling
:func:`register_standard_rewrites`: the core's rewrites enter each compilation's
database through the same hook a third-party plugin uses, and can be selected or
turned off by the same tags.

Where everything goes (positions of the standard phases: ``merge1`` 0,
``canonicalize`` 1, ``stabilize`` 1.5, ``specialize`` 2, ``merge2`` 49, ``inplace`` 50):

=============================== =================== ===================================
entry                           where               tags
=============================== =================== ===================================
``inline_ofg_expansion``        own phase, -0.01    fast_run, fast_compile
``lower_xtensor``, ...          own phases, 0.09    fast_run, fast_compile (see
                                and 0.091           :mod:`opweave.xtensor.rewriting.
                                                    plugin`)
``constant_folding``            own phase, 0.5      fast_run, fast_compile,
                                                    constant_folding
``canonicalize_constant_folding`` ``canonicalize``  fast_run, constant_folding
``local_mul_by_one``, ...       ``canonicalize``    fast_run, canonicalize
``local_shape_i_from_infer_shape``, ``canonicalize`` fast_run, shape
``local_shape_from_infer_shape``
``local_log1p``, ...            ``stabilize``       fast_run, stabilize
``local_exp_over_1_plus_exp``,  ``stabilize``       fast_run, stabilize
``logsigm_to_softplus``, ...
``local_log_kv``,               ``stabilize``       fast_run, stabilize
``local_log_iv``
``local_one_plus_erf``, ...     ``canonicalize``,   fast_run, and the phase's name
                                ``stabilize``,
                                ``specialize``
``local_log_erfc``              ``stabilize``,      fast_run, and the phase's name
                                ``specialize``
``local_min_to_neg_max``        ``canonicalize``    fast_run, canonicalize
``local_join_dims_to_reshape``, ``canonicalize``    fast_run, fast_compile
``local_split_dims_to_reshape``
``local_neg_max_neg_to_min``    ``specialize``      fast_run, uncanonicalize
``local_1msigmoid``,            ``specialize``      fast_run, specialize
``log1p_neg_sigmoid``
``specialize_constant_folding`` ``specialize``      fast_run, constant_folding
``local_dot_transposes``        ``specialize``      fast_run, specialize
``local_useless_alloc``, ...    phases as PyTensor  fast_run (and useless, shape_unsafe),
                                                    see :func:`~opweave.tensor.rewriting.
                                                    simplify.register_simplify`
``local_mul_switch_sink``       ``canonicalize``,   fast_run, and the phase's name
                                ``stabilize``,
                                ``specialize``
``local_add_zero_fill``         ``canonicalize``,   fast_run, shape_unsafe, and the
                                ``specialize``      phase's name
``local_div_switch_sink``       ``canonicalize``    fast_run, canonicalize
``local_mul_div_cancel``,       ``canonicalize``    fast_run, canonicalize
``local_greedy_distributor``
``local_mul_constants``         own phase           fast_run, canonicalize
                                (``canonicalize_
                                mul_constants``,
                                0.45),
                                ``canonicalize``
``elemwise_fusion``             own phase, 3        fast_run, fusion
``careduce_fusion``             own phase, 3.5      fast_run, fusion
``inplace_elemwise``            ``inplace``         fast_run, inplace
``scan_push_out_non_seq``, ...  own entries, 0.01   fast_run, scan
``scan_merge``, ``scan_save_mem`` to 1.61           (:mod:`opweave.scan.rewriting`)
``cond_make_inplace``           own phase, 95       fast_run, inplace
=============================== =================== ===================================

Every entry is also tagged with its own name and the name of the database holding it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from opweave.compile.builders_rewrites import register_inline_ofg
from opweave.graph.rewriting.graph import in2out
from opweave.ifelse import cond_make_inplace
from opweave.scan.rewriting import register_scan_rewrites
from opweave.tensor.rewriting.bessel import register_bessel
from opweave.tensor.rewriting.blockwise import register_blockwise
from opweave.tensor.rewriting.cancel import register_cancel
from opweave.tensor.rewriting.canonicalize import register_canonicalize
from opweave.tensor.rewriting.constant_folding import register_constant_folding
from opweave.tensor.rewriting.erf import register_erf
from opweave.tensor.rewriting.fusion import register_fusion
from opweave.tensor.rewriting.inplace import register_inplace
from opweave.tensor.rewriting.math import register_math
from opweave.tensor.rewriting.min_max import register_min_max
from opweave.tensor.rewriting.reduce_fusion import register_reduce_fusion
from opweave.tensor.rewriting.reshape import register_reshape
from opweave.tensor.rewriting.shape import register_shape
from opweave.tensor.rewriting.simplify import register_simplify
from opweave.tensor.rewriting.switch_sink import register_switch_sink
from opweave.xtensor.rewriting.plugin import register_xtensor_lowering

if TYPE_CHECKING:
    from opweave.graph.rewriting import RewriteDatabase

__all__ = ["register_standard_rewrites"]


def register_standard_rewrites(db: RewriteDatabase) -> None:
    """Register the core's standard rewrites into ``db``.

    Parameters
    ----------
    db
        The database being built for one compilation; it already holds the standard
        phases (see :func:`opweave.graph.rewriting.build_rewrite_database`).
    """
    register_inline_ofg(db)
    register_xtensor_lowering(db)
    register_constant_folding(db)
    register_canonicalize(db)
    register_blockwise(db)
    register_math(db)
    register_min_max(db)
    register_bessel(db)
    register_erf(db)
    register_shape(db)
    register_reshape(db)
    register_simplify(db)
    register_switch_sink(db)
    register_cancel(db)
    register_fusion(db)
    register_reduce_fusion(db)
    register_inplace(db)
    register_scan_rewrites(db)
    db.register(
        "cond_make_inplace",
        in2out(cond_make_inplace, ignore_newtrees=True),
        "fast_run",
        "inplace",
        position=95,
    )
