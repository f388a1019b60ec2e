from cerveau_tui.context.pack import pack


def count(text):
    return len(text)


def test_everything_fits_unchanged():
    hist = [{"role": "user", "content": "task"}, {"role": "assistant", "content": "ok"}]
    msgs, _, dropped = pack("sys", hist, budget=10_000, count=count)
    assert dropped == 0 and msgs[1:] == hist and msgs[0] == {"role": "system", "content": "sys"}


def test_the_system_prompt_does_not_change_between_packs():
    hist = [{"role": "user", "content": "task"}]
    a, _, _ = pack("sys", hist, budget=10_000, count=count)
    hist.append({"role": "assistant", "content": "more"})
    b, _, _ = pack("sys", hist, budget=10_000, count=count)
    assert a[:2] == b[:2]  # byte-stable prefix: only appended to


def test_overflow_drops_oldest_rounds_keeps_task_and_pairs_calls_with_results():
    hist = [{"role": "user", "content": "the task"}]
    for i in range(10):
        hist.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": f"c{i}",
                        "type": "function",
                        "function": {"name": "read_file", "arguments": "{}"},
                    }
                ],
            }
        )
        hist.append({"role": "tool", "tool_call_id": f"c{i}", "content": "x" * 100})
    msgs, _, dropped = pack("sys", hist, budget=300, count=count, brief=lambda n: f"brief {n}")
    assert dropped > 0
    assert msgs[1]["content"] == "the task"
    assert msgs[2]["content"] == f"brief {dropped}"
    assert msgs[3]["role"] == "assistant"  # never a tool result without its call
    ids = [m.get("tool_call_id") for m in msgs if m["role"] == "tool"]
    calls = [m["tool_calls"][0]["id"] for m in msgs if m.get("tool_calls")]
    assert ids == calls
