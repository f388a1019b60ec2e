from moreiter import chunked, first, nth, tail, take


def test_take():
    assert take(2, "abc") == ["a", "b"]


def test_tail():
    assert list(tail(3, "ABCDEFG")) == ["E", "F", "G"]


def test_tail_short():
    assert list(tail(5, "AB")) == ["A", "B"]


def test_nth():
    assert nth(range(10), 3) == 3


def test_first():
    assert first([], "x") == "x"


def test_chunked():
    assert list(chunked(range(5), 2)) == [[0, 1], [2, 3], [4]]
