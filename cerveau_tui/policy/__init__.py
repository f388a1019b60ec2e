"""Policy: sandbox modes, approval policies, rules, network grant -> verdicts (pure)."""

from __future__ import annotations

from .glob import glob_match
from .policy import Policy
from .verdict import Verdict

__all__ = ["Policy", "Verdict", "glob_match"]
