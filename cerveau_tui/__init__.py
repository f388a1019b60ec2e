"""cerveau-tui: a terminal harness that drives a local llama-server model as a coding agent."""

__version__ = "0.1.0"
