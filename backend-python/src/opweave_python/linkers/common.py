"""Re-exports of the linking machinery, which lives in the core (:mod:`opweave.link.loop`)."""

from opweave.link.loop import LinkedGraph, describe_failure, link_graph

__all__ = ["LinkedGraph", "describe_failure", "link_graph"]
