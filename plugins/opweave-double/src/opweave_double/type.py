"""The ``Double`` type of Theano's tutorial: Python floats (its final version)."""

from __future__ import annotations

from typing import Any

from opweave import graph as gof


class Double(gof.Type):
    """Python ``float`` values.

    ``filter`` casts ints and other numbers to float only when no precision is
    lost, unless ``allow_downcast`` is true; with ``strict`` only floats pass.
    """

    def filter(self, x: Any, strict: bool = False, allow_downcast: bool | None = None) -> float:
        """Return ``x`` as a float (see the class docstring for the rules)."""
        if strict:
            if isinstance(x, float):
                return x
            raise TypeError("Expected a float!")
        if allow_downcast:
            return float(x)
        # Covers both the False and None cases.
        x_float = float(x)
        if x_float == x:
            return x_float
        raise TypeError(
            f"The double type cannot accurately represent value {x} (of type {type(x)}): you "
            "must explicitly allow downcasting if you want to do this."
        )

    def values_eq_approx(self, x: float, y: float, tolerance: float = 1e-4) -> bool:
        """Relative comparison with ``tolerance``."""
        if x == y:
            return True
        return abs(x - y) / (abs(x) + abs(y)) < tolerance

    def __eq__(self, other: object) -> bool:
        """Every ``Double`` is the same Type (a pickled copy included), as the tutorial's
        final version defines it."""
        return type(self) is Double and type(other) is Double

    def __hash__(self) -> int:
        return hash(Double)

    def __str__(self) -> str:
        return "double"

    # The C version of the type, as Theano's C tutorial writes it: a C ``double`` on the stack.

    def c_declare(self, name: str, sub: dict[str, str], check_input: bool = True) -> str:
        """Declare the C ``double`` holding the value."""
        return f"double {name};"

    def c_init(self, name: str, sub: dict[str, str]) -> str:
        """Start at 0.0."""
        return f"{name} = 0.0;"

    def c_extract(self, name: str, sub: dict[str, str], check_input: bool = True) -> str:
        """Accept Python floats only, failing with ``TypeError('expected a float')``."""
        return """
        if (!PyFloat_Check(py_%(name)s)) {
            PyErr_SetString(PyExc_TypeError, "expected a float");
            %(fail)s
        }
        %(name)s = PyFloat_AsDouble(py_%(name)s);
        """ % dict(sub, name=name)  # noqa: UP031 - the tutorial's templating

    def c_sync(self, name: str, sub: dict[str, str]) -> str:
        """Box the result as a new Python float (``None`` if that fails)."""
        return """
        Py_XDECREF(py_%(name)s);
        py_%(name)s = PyFloat_FromDouble(%(name)s);
        if (!py_%(name)s) {
            printf("PyFloat_FromDouble failed on: %%f\\n", %(name)s);
            Py_XINCREF(Py_None);
            py_%(name)s = Py_None;
        }
        """ % dict(name=name)  # noqa: UP031 - the tutorial's templating

    def c_cleanup(self, name: str, sub: dict[str, str]) -> str:
        """Nothing to release: the double lives on the stack."""
        return ""

    def c_code_cache_version(self) -> tuple[int, ...]:
        """Version of the C code above."""
        return (1,)


#: The one advertised instance (the tutorial hides the class behind it).
double = Double()
