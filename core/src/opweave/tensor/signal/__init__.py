"""Signal processing on tensors: one- and two-dimensional convolution (PyTensor's
``pytensor.tensor.signal``); the Ops are in :mod:`opweave.tensor.signal.conv`."""

from opweave.tensor.signal.conv import convolve1d, convolve2d

__all__ = ("convolve1d", "convolve2d")
