"""Small recipes for iterables, after the itertools documentation."""

from .recipes import chunked, first, nth, tail, take

__all__ = ["chunked", "first", "nth", "tail", "take"]
