"""``python -m opweave``: see :mod:`opweave.cli`."""

from opweave.cli import main

raise SystemExit(main())
