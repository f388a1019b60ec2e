from pagination import page_count, page_slice


def test_full_pages():
    assert page_count(20, 10) == 2


def test_partial_last_page():
    assert page_count(21, 10) == 3


def test_empty():
    assert page_count(0, 10) == 0


def test_slice():
    assert page_slice(2, 10) == (10, 20)
