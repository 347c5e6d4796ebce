"""The differential harness: every Op of the backends' tables, compiled with every linker
on edge inputs, against NumPy/SciPy and against each other.

``catalogue`` says what is checked (cases, reference functions, dtypes, known
disagreements, exclusions), ``values`` how inputs are made and outputs compared, ``runner``
how cases are batched into few compiled functions and how disagreements are described.
"""
