"""The ``jax`` lowerings of opweave's Ops, by family.

Each module defines ``LOWERINGS``: Op class -> factory. A factory is called once per node
as ``factory(op, node)`` and returns a function of the node's input values (JAX arrays, or
static NumPy values, see :mod:`opweave_jax.values`) returning its output value (a tuple
for several outputs). Scalar Op classes map to factories of elementwise functions of
broadcast arrays, which the ``Elemwise`` and ``Composite`` lowerings use.
"""
