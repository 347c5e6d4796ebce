"""opweave-jax: the ``jax`` linker, which lowers a rewritten graph to one ``jax.jit``
function of ``jax.numpy`` / ``jax.lax`` calls and runs it through XLA.

The plugin (:mod:`opweave_jax.plugin`) and :class:`~opweave_jax.linker.JAXLinker` import no
JAX: it is imported when the first ``jax``-linker function is linked.
"""

from opweave_jax.linker import JAXLinker

__all__ = ["JAXLinker"]
