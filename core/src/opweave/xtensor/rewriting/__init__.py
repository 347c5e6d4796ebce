"""The lowering of xtensor graphs to tensor graphs (PyTensor's
``pytensor.xtensor.rewriting``): see :mod:`opweave.xtensor.rewriting.plugin`."""
