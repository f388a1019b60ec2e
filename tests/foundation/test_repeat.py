from cerveau_tui.loop.guards.repeats import canonical, is_repeat


def test_three_identical_calls_are_a_repeat():
    calls = [("bash", {"command": "make"})] * 3
    assert is_repeat(calls, 3)


def test_two_identical_calls_are_not_yet():
    assert not is_repeat([("bash", {"command": "make"})] * 2, 3)


def test_key_order_does_not_make_calls_different():
    a = ("edit_file", {"path": "a", "old": "x", "new": "y"})
    b = ("edit_file", {"new": "y", "old": "x", "path": "a"})
    assert is_repeat([a, b, a], 3)


def test_a_different_approach_never_trips():
    calls = [
        ("bash", {"command": "make"}),
        ("bash", {"command": "make -j1"}),
        ("bash", {"command": "make"}),
    ]
    assert not is_repeat(calls, 3)


def test_same_arguments_to_another_tool_differ():
    assert canonical("read_file", {"path": "a"}) != canonical("list_files", {"path": "a"})


def test_only_the_tail_counts():
    calls = [("read_file", {"path": "a"})] * 3 + [("read_file", {"path": "b"})]
    assert not is_repeat(calls, 3)
