"""Recipes for iterables."""

from collections import deque
from itertools import islice


def take(n, iterable):
    """Return the first n items of the iterable as a list.

    >>> take(3, range(10))
    [0, 1, 2]
    """
    return list(islice(iterable, n))


def tail(n, iterable):
    """Return an iterator over the last n items of the iterable.

    >>> list(tail(3, 'ABCDEFG'))
    ['E', 'F', 'G']
    """
    return iter(deque(iterable, maxlen=n + 1))


def nth(iterable, n, default=None):
    """Return the nth item or a default value."""
    return next(islice(iterable, n, None), default)


def first(iterable, default=None):
    """Return the first item of the iterable, or default if it is empty."""
    return next(iter(iterable), default)


def chunked(iterable, n):
    """Break the iterable into lists of length n (the last may be shorter)."""
    it = iter(iterable)
    while chunk := take(n, it):
        yield chunk
