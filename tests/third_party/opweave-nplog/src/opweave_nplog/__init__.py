"""opweave-nplog: a backend distribution written against opweave's public API only.

Its ``nplog`` linker runs every node with the ``py`` implementation the core's resolver
finds, and logs each call on the ``opweave_nplog`` logger. It adds a mode (``NPLOG``) and a
module path (``opweave.link.nplog``) without a file in the core.
"""
