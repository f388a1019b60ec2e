"""The only module that imports concrete adapters. Core receives what `adapter_for` returns.

A registry rather than imports scattered through the gate: the seam only holds if exactly one
place knows which stacks exist (`.importlinter` enforces it for core packages).
"""

from __future__ import annotations

from pathlib import Path

from .base import Adapter
from .generic import GenericAdapter
from .node import NodeAdapter
from .python import PythonAdapter


class AdapterRegistry:
    """Adapters in priority order; the generic one last, as the fallback that always applies."""

    def __init__(self, adapters: list[Adapter] | None = None) -> None:
        self.adapters: list[Adapter] = adapters or [
            PythonAdapter(),
            NodeAdapter(),
            GenericAdapter(),
        ]

    def detect(self, workspace: Path) -> Adapter:
        for adapter in self.adapters:
            if adapter.detect(workspace):
                return adapter
        return GenericAdapter()

    def __call__(self, workspace: Path) -> Adapter:
        return self.detect(workspace)


def adapter_for(workspace: Path) -> Adapter:
    """The adapter for a workspace, from the default registry."""
    return AdapterRegistry().detect(workspace)
