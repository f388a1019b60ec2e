"""The task benchmark (benchmarks/tasks/, benchmarks/task_bench.py) cannot rot: every hidden check
fails on its untouched workspace and passes on a correct fix, and the runner runs a scripted task
end to end through the real CLI and prints its figures."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from cerveau_tui.testing.task_bench import TASKS, Task, check, figures, load_tasks

REPO = Path(__file__).resolve().parents[2]


def _sub(path: str, old: str, new: str) -> Callable[[Path], None]:
    def fix(ws: Path) -> None:
        text = (ws / path).read_text(encoding="utf-8")
        assert old in text, (path, old)
        (ws / path).write_text(text.replace(old, new), encoding="utf-8")

    return fix


def _rename(ws: Path) -> None:
    (ws / "helpers.py").rename(ws / "strings.py")
    _sub("app.py", "from helpers import", "from strings import")(ws)
    _sub("report.py", "import helpers", "import strings")(ws)
    _sub("report.py", "helpers.whisper", "strings.whisper")(ws)


def _config(ws: Path) -> None:
    _sub("config/settings.json", '"pool": 4,\n', '"pool": 4\n')(ws)
    _sub("config/settings.json", '"127.0.0.1"],\n', '"127.0.0.1"]\n')(ws)


def _squares(ws: Path) -> None:
    rows = "n,square\n" + "".join(f"{n},{n * n}\n" for n in range(1, 21))
    (ws / "data" / "squares.csv").write_text(rows, encoding="utf-8")


SLUG = '\n\ndef slugify(text):\n    kept = "".join(c for c in text.lower() if c.isalnum() or c == " ")\n    return "-".join(kept.split())\n'
#: A correct fix per task (the workspace's), or the answer a question wants (the events').
FIXES: dict[str, Callable[[Path], None] | str] = {
    "tail_bug": _sub("moreiter/recipes.py", "maxlen=n + 1", "maxlen=n"),
    "missing_function": _sub("textutil.py", '+ "…"\n', '+ "…"\n' + SLUG),
    "doctest_fail": _sub("money.py", "{cents % 100}", "{cents % 100:02d}"),
    "rename_module": _rename,
    "config_fix": _config,
    "question_port": "It listens on port 8421 (DEFAULT_PORT).",
    "question_calc": "disc_area computes it.",
    "off_by_one": _sub("pagination.py", "return total // per_page", "return -(-total // per_page)"),
    "fix_import": _sub("report.py", "import mean, spread", "import average as mean, spread"),
    "csv_data": _squares,
}


def _judge(task: Task, tmp: Path, fix: Callable[[Path], None] | str | None) -> bool:
    ws = tmp / "ws"
    shutil.copytree(task.folder / "workspace", ws)
    said = {"type": "assistant_message", "payload": {"content": "I looked at the files."}}
    if callable(fix):
        fix(ws)
    elif fix is not None:
        said["payload"]["content"] = fix
    events = tmp / "events.jsonl"
    events.write_text(json.dumps(said) + "\n", encoding="utf-8")
    return check(task, ws, events, tmp)[0]


def test_the_ten_tasks_are_there_each_a_prompt_a_workspace_and_a_check() -> None:
    assert sorted(t.name for t in load_tasks()) == sorted(FIXES)
    assert all(t.prompt for t in load_tasks())


@pytest.mark.parametrize("name", sorted(FIXES))
def test_a_hidden_check_fails_untouched_and_passes_on_a_correct_fix(
    name: str, tmp_path: Path
) -> None:
    (task,) = load_tasks(TASKS, (name,))
    assert not _judge(task, tmp_path / "untouched", None)
    assert _judge(task, tmp_path / "fixed", FIXES[name])


def test_a_question_s_answer_counts_only_in_the_model_s_own_words(tmp_path: Path) -> None:
    """A tool's output that names the port (the model read server.py) is not an answer."""
    (task,) = load_tasks(TASKS, ("question_port",))
    ws = tmp_path / "ws"
    shutil.copytree(task.folder / "workspace", ws)
    events = tmp_path / "events.jsonl"
    read = {"type": "tool_result", "payload": {"output": "DEFAULT_PORT = 8421"}}
    events.write_text(json.dumps(read) + "\n", encoding="utf-8")
    assert not check(task, ws, events, tmp_path)[0]


def test_a_completed_turn_with_a_failing_check_is_a_false_done() -> None:
    ended = [{"type": "turn_ended", "payload": {"reason": "completed"}}]
    assert figures([ended], passed=False, wall=1.0)["false done"] == 1
    assert figures([ended], passed=True, wall=1.0)["false done"] == 0


def test_the_runner_runs_scripted_models_on_their_tasks_and_prints_the_figures() -> None:
    """benchmarks/task_bench.py --scripted, end to end: the real CLI on the scripted server, the
    hidden check, the table. The write_file that repeats itself is cut, the legitimate table is
    not (0 false trips), and both tasks' checks pass."""
    proc = subprocess.run(
        [sys.executable, "benchmarks/task_bench.py", "--scripted"]
        + ["--only", "repeat_write,legit_table", "--max-tokens", "1024", "--max-iterations", "4"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout
    head = re.search(r"^task +(.*)$", out, re.M)
    assert head is not None, out
    cols = head.group(1).split()
    rows = {
        m.group(1): dict(zip(cols, m.group(2).split(), strict=True))
        for m in re.finditer(r"^(repeat_write|legit_table|TOTAL) +(.*)$", out, re.M)
    }
    assert rows["repeat_write"]["rep_cut"] == "1" and rows["repeat_write"]["passed"] == "1", out
    assert rows["legit_table"]["false_trips"] == "0" and rows["legit_table"]["passed"] == "1"
    assert rows["TOTAL"]["rep_cut"] == "1"
    assert out.rstrip().splitlines()[-1].startswith("whole run:")
