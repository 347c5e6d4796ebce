"""How every benchmark is timed, on the opweave side and on the PyTensor side alike.

Standard library only: the PyTensor helper imports this module from the PyTensor venv.
"""

from __future__ import annotations

import statistics
import timeit
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Settings:
    """How long to measure.

    ``repeat`` runs per measurement, each lasting at least ``min_run_seconds``; the large
    vector cases use ``big_n`` elements; compile times are the median of
    ``compile_repeat`` fresh compile directories.
    """

    repeat: int
    min_run_seconds: float
    big_n: int
    compile_repeat: int

    @classmethod
    def choose(cls, quick: bool) -> Settings:
        """The full settings, or the ``--quick`` ones."""
        if quick:
            return cls(repeat=3, min_run_seconds=0.05, big_n=10**6, compile_repeat=1)
        return cls(repeat=7, min_run_seconds=0.2, big_n=10**7, compile_repeat=3)

    def as_dict(self) -> dict[str, Any]:
        """The settings as a JSON-ready dict."""
        return asdict(self)


def call_timer(fn: Callable[..., Any], *args: Any) -> timeit.Timer:
    """A ``timeit.Timer`` running ``fn(*args)``, with the arguments bound as names.

    Calling through a compiled ``timeit`` loop with the arguments as globals keeps the
    loop's own cost to a few nanoseconds, which matters when measuring call overhead.
    """
    names = [f"a{i}" for i in range(len(args))]
    bound = dict(zip(names, args, strict=True))
    return timeit.Timer(f"fn({', '.join(names)})", globals={"fn": fn, **bound})


def calls_per_run(timer: timeit.Timer, min_run_seconds: float) -> int:
    """The smallest number of calls in 1, 2, 5, 10, 20, 50, ... lasting ``min_run_seconds``."""
    number = 1
    while True:
        for factor in (1, 2, 5):
            calls = number * factor
            if timer.timeit(calls) >= min_run_seconds:
                return calls
        number *= 10


def median_time(fn: Callable[..., Any], *args: Any, repeat: int, min_run_seconds: float) -> float:
    """Median seconds per call of ``fn(*args)``.

    The number of calls per run is chosen (which also warms up) so that a run lasts at
    least ``min_run_seconds``; the result is the median over ``repeat`` runs of the mean
    time per call.
    """
    timer = call_timer(fn, *args)
    number = calls_per_run(timer, min_run_seconds)
    return statistics.median(timer.repeat(repeat=repeat, number=number)) / number
