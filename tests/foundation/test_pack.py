"""The pieces of every request (context/pack.py); how the window is kept is tests/context/."""

from cerveau_tui.context.pack import rounds, system_prompt


def _call(i: int) -> list[dict]:
    return [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": f"c{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": f"c{i}", "content": "r"},
    ]


def test_a_call_and_its_results_are_one_round():
    hist = [{"role": "user", "content": "task"}, *_call(0), *_call(1)]
    assert rounds(hist) == [(0, 1), (1, 3), (3, 5)]


def test_the_system_prompt_is_the_base_then_the_sections_in_order():
    text = system_prompt(["a", "", "b"])
    assert text.endswith("\n\na\n\nb")
