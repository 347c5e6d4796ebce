"""``python -m opweave_c cache list|clear``."""

from opweave_c.cli import main

raise SystemExit(main())
