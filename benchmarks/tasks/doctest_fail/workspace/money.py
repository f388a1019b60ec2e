"""Money amounts are kept in integer cents."""


def format_cents(cents):
    """Format an amount of cents as dollars, always with two decimals.

    >>> format_cents(150)
    '$1.50'
    >>> format_cents(7)
    '$0.07'
    >>> format_cents(-250)
    '-$2.50'
    """
    sign = "-" if cents < 0 else ""
    cents = abs(cents)
    return f"{sign}${cents // 100}.{cents % 100}"


def add(*amounts):
    """Sum amounts of cents.

    >>> add(100, 250, 5)
    355
    """
    return sum(amounts)
