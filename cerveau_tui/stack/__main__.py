"""`python -m cerveau_tui.stack provision|up|down|status` - the stack CLI on its own."""

from __future__ import annotations

import sys

from cerveau_tui.stack.cli import main

sys.exit(main())
