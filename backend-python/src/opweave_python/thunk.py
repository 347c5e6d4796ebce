"""Thunks built from ``perform`` implementations: the core's (:mod:`opweave.link.perform`),
re-exported under their earlier names."""

from __future__ import annotations

from opweave.link.perform import Perform, find_perform, make_perform_thunk, own_perform

__all__ = ["Perform", "find_perform", "make_perform_thunk", "own_perform"]
