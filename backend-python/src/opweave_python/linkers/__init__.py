"""The ``py`` and ``vm`` linkers."""
