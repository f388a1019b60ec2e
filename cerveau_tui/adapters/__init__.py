"""Stack-specific parts (detect, gate command, autofix, error lines) behind adapters/base.py's
protocol. Only adapters/registry.py imports the concrete adapters; `.importlinter` enforces it."""
