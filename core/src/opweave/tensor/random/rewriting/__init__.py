"""Rewrites of random variables (``pytensor.tensor.random.rewriting``)."""

from opweave.tensor.random.rewriting.basic import *  # noqa: F403
from opweave.tensor.random.rewriting.basic import __all__ as __all__
