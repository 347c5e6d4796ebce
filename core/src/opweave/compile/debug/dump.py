"""``function_dump``: save the arguments of a ``function`` call to reproduce a compilation."""

from __future__ import annotations

import copy
import io
import pickle
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from opweave.graph.basic import Variable

__all__ = ["StripPickler", "function_dump"]


class StripPickler(pickle.Pickler):
    """A pickler that leaves chosen annotations out of every Variable's ``tag``.

    Parameters
    ----------
    file
        The binary file to write to.
    protocol
        The pickle protocol (default: the highest).
    extra_tag_to_remove
        Names of ``var.tag`` attributes to leave out (``trace`` always is).
    """

    def __init__(
        self,
        file: io.BufferedIOBase | Any,
        protocol: int | None = pickle.HIGHEST_PROTOCOL,
        extra_tag_to_remove: Iterable[str] | None = None,
    ) -> None:
        super().__init__(file, protocol)
        self.protocol = pickle.HIGHEST_PROTOCOL if protocol is None or protocol < 0 else protocol
        self.tag_to_remove = {"trace", *(extra_tag_to_remove or ())}

    def reducer_override(self, obj: Any) -> Any:
        """Pickle Variables with their ``tag`` stripped; everything else as usual."""
        if not isinstance(obj, Variable):
            return NotImplemented
        tag = getattr(obj, "tag", None)
        if tag is None or not self.tag_to_remove & set(vars(tag)):
            return NotImplemented
        reduced = list(obj.__reduce_ex__(self.protocol))
        state = dict(reduced[2])
        stripped = copy.copy(tag)
        for name in self.tag_to_remove:
            stripped.__dict__.pop(name, None)
        state["tag"] = stripped
        reduced[2] = state
        return tuple(reduced)


def function_dump(
    filename: str | Path,
    inputs: Sequence[Any],
    outputs: Any = None,
    mode: Any = None,
    updates: Any = None,
    givens: Any = None,
    no_default_updates: bool | Sequence[Variable] = False,
    accept_inplace: bool = False,
    name: str | None = None,
    rebuild_strict: bool = True,
    allow_input_downcast: bool | None = None,
    profile: Any = None,
    on_unused_input: str | None = None,
    extra_tag_to_remove: Iterable[str] | None = None,
    trust_input: bool = False,
) -> None:
    """Pickle the arguments of a :func:`~opweave.compile.maker.function` call to a file.

    Replace ``opweave.function(...)`` by ``function_dump("f.pkl", ...)`` to make a
    reproducible case of a compilation problem: the graph, the shared variables with
    their values and every option are saved (set shared variables to zeros first if
    their values must not be shared). To compile it again::

        with open("f.pkl", "rb") as f:
            kwargs = pickle.load(f)
        fn = opweave.function(**kwargs)

    Parameters
    ----------
    filename
        Where to write.
    inputs, outputs, mode, updates, givens, no_default_updates
        The arguments of :func:`~opweave.compile.maker.function` of the same names, as are
        ``accept_inplace``, ``name``, ``rebuild_strict``, ``allow_input_downcast``,
        ``profile``, ``on_unused_input`` and ``trust_input``.
    extra_tag_to_remove
        Names of ``var.tag`` annotations to leave out of the pickle (for annotations that
        do not pickle).
    """
    kwargs = {
        "inputs": inputs,
        "outputs": outputs,
        "mode": mode,
        "updates": updates,
        "givens": givens,
        "no_default_updates": no_default_updates,
        "accept_inplace": accept_inplace,
        "name": name,
        "rebuild_strict": rebuild_strict,
        "allow_input_downcast": allow_input_downcast,
        "profile": profile,
        "on_unused_input": on_unused_input,
        "trust_input": trust_input,
    }
    with Path(filename).open("wb") as f:
        StripPickler(f, extra_tag_to_remove=extra_tag_to_remove).dump(kwargs)
