"""Pages of a listing."""


def page_count(total, per_page):
    """How many pages `total` items fill, `per_page` a page (0 items: 0 pages)."""
    if per_page <= 0:
        raise ValueError("per_page must be positive")
    return total // per_page


def page_slice(page, per_page):
    """The (start, stop) indices of a 1-based page."""
    start = (page - 1) * per_page
    return start, start + per_page
