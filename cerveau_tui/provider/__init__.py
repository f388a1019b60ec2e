"""The model server client: streaming chat, tool-call assembly, props, tokenize, errors."""

from .types import (
    Completion,
    Delta,
    ErrorClass,
    Provider,
    ProviderError,
    ServerProps,
    Timings,
    ToolCall,
    Usage,
)

__all__ = [
    "Completion",
    "Delta",
    "ErrorClass",
    "Provider",
    "ProviderError",
    "ServerProps",
    "Timings",
    "ToolCall",
    "Usage",
]
