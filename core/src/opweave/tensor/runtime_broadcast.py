"""The broadcasting rule every backend checks when a value is stretched to a shape known
only at run time (``alloc``, ``set_subtensor``/``inc_subtensor``): a dimension of length 1
stretches only when its static length is 1, as for ``Elemwise`` (gradients sum over
statically broadcast dimensions only)."""

from __future__ import annotations

__all__ = ["check_runtime_broadcast"]


def check_runtime_broadcast(
    who: str, static: tuple[int | None, ...], shape: tuple[int, ...], target: tuple[int, ...]
) -> None:
    """Check that a value of ``shape`` broadcasts to ``target`` the way its Type allows.

    Parameters
    ----------
    who
        The Op, for messages.
    static
        The value's static shape (``None`` where unknown).
    shape
        The value's shape.
    target
        The shape it is stretched to.

    Raises
    ------
    ValueError
        When the shapes do not broadcast, or a dimension of length 1 whose static length is
        not 1 would stretch.
    """
    offset = len(target) - len(shape)
    if offset < 0 or any(s not in (t, 1) for s, t in zip(shape, target[offset:], strict=True)):
        raise ValueError(f"{who}: cannot broadcast a value of shape {shape} to {target}")
    for d, (st, s, t) in enumerate(zip(static, shape, target[offset:], strict=True)):
        if s == 1 and t != 1 and st != 1:
            raise ValueError(
                f"{who}: run-time broadcasting is not allowed: dimension {d} of the value has "
                f"length 1 but its static length is unknown, and the target has length {t} "
                "(use specify_shape to mark the dimension as length 1)"
            )
