"""The bash circuit breaker: failure shapes and streaks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cerveau_tui.loop.guards.breaker import Breaker, family_of, shape_of

MODULE_MISSING = (
    'Traceback (most recent call last):\n  File "<string>", line 1, in <module>\n'
    "ModuleNotFoundError: No module named 'leftpadx'\n[exit code 1]"
)
PIP_MISSING = (
    "ERROR: Could not find a version that satisfies the requirement leftpadx==1.2 (from versions: none)\n"
    "ERROR: No matching distribution found for leftpadx==1.2\n[exit code 1]"
)


def test_success_has_no_shape() -> None:
    assert shape_of("ls", 0, "a.py\n[exit code 0]") is None


def test_grep_without_match_is_not_a_failure() -> None:
    assert shape_of("grep -r TODO .", 1, "(no output)\n[exit code 1]") is None


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("bash: foo: command not found", "command not found: foo"),
        ("bash: line 1: foo: command not found", "command not found: foo"),
        ("sh: 1: foo: not found", "command not found: foo"),
        ("/bin/sh: 1: foo: not found", "command not found: foo"),
        ("zsh: command not found: foo", "command not found: foo"),
    ],
)
def test_shell_texts_for_a_missing_program_are_one_shape(output: str, expected: str) -> None:
    assert shape_of("foo --version", 127, output) == expected


def test_pip_variants_on_one_package_are_one_shape() -> None:
    shapes = {
        shape_of("pip install foo", 1, "ERROR: No matching distribution found for foo"),
        shape_of("pip3 install foo==1.2", 1, "ERROR: No matching distribution found for foo==1.2"),
        shape_of(
            "python -m pip install foo --user",
            1,
            "ERROR: Could not find a version that satisfies the requirement Foo (from versions: none)",
        ),
    }
    assert shapes == {"No matching distribution found for foo"}


def test_submodule_import_names_the_top_package() -> None:
    assert shape_of("python3 x.py", 1, "ModuleNotFoundError: No module named 'yaml.loader'") == (
        "No module named yaml"
    )


def test_apt_shape_drops_the_python3_prefix() -> None:
    out = "Reading package lists...\nE: Unable to locate package python3-leftpadx"
    assert (
        shape_of("apt-get install -y python3-leftpadx", 100, out)
        == "Unable to locate package leftpadx"
    )


@pytest.mark.parametrize(
    ("command", "output"),
    [
        ("ls src/config.yaml", "ls: cannot access 'src/config.yaml': No such file or directory"),
        ("cat config.yaml", "cat: config.yaml: No such file or directory"),
        (
            "python3 /w/config.yaml",
            "python3: can't open file '/w/config.yaml': [Errno 2] No such file or directory",
        ),
        (
            "python3 r.py",
            "FileNotFoundError: [Errno 2] No such file or directory: '../config.yaml'",
        ),
    ],
)
def test_missing_file_shape_is_keyed_by_basename(command: str, output: str) -> None:
    assert shape_of(command, 2, output) == "No such file or directory: config.yaml"


def test_missing_script_run_as_a_program_is_a_missing_file() -> None:
    assert (
        shape_of("./run.sh", 127, "sh: 1: ./run.sh: not found")
        == "No such file or directory: run.sh"
    )


def test_curl_exit_7_is_a_refused_connection() -> None:
    assert shape_of("curl -s http://localhost:9", 7, "") == "Connection refused"


def test_permission_denied_is_one_shape_whatever_the_path() -> None:
    a = shape_of("touch /etc/a", 1, "touch: cannot touch '/etc/a': Permission denied")
    b = shape_of("echo x > /usr/b", 1, "bash: line 1: /usr/b: Permission denied")
    assert a == b == "Permission denied"


def test_generic_shape_strips_numbers_paths_and_literals() -> None:
    a = shape_of(
        "python3 t.py", 1, "  File \"/tmp/a/t.py\", line 3\nNameError: name 'x' is not defined"
    )
    b = shape_of(
        "python3 t.py", 1, "  File \"/tmp/b/t.py\", line 9\nNameError: name 'y' is not defined"
    )
    assert a == b
    assert a is not None and "'x'" not in a and "exit 1" in a


def test_generic_shape_strips_timestamps_and_hex() -> None:
    a = shape_of("./srv", 3, "2026-11-29T10:00:01Z fatal: bad object 0xdeadbeef")
    b = shape_of("./srv", 3, "2026-11-30T11:22:33Z fatal: bad object 0x1234abcd")
    assert a == b


def test_timeout_is_a_shape_of_the_program() -> None:
    assert (
        shape_of("python3 -m http.server", None, "[killed: timed out after 120 s]")
        == "timed out: http.server"
    )


def test_family_sees_through_wrappers_and_python_m() -> None:
    assert family_of("sudo python3 -m pip install x") == "pip"
    assert family_of("cd src && PYTHONPATH=. timeout 5 python3.11 t.py | tail") == "python"
    assert family_of("pip3.11 install x") == "pip"


def test_three_of_a_shape_trip_with_a_question() -> None:
    b = Breaker(3)
    assert b.observe("python3 -c 'import leftpadx'", 1, MODULE_MISSING) is None
    assert b.observe("pip install leftpadx==1.2", 1, PIP_MISSING) is None
    trip = b.observe("leftpadx --help", 127, "bash: leftpadx: command not found")
    assert trip is not None
    assert trip.shape == "missing dependency: leftpadx"
    assert trip.count == 3
    assert "leftpadx" in trip.question and "ask the person" in trip.question


def test_the_counter_resets_after_a_trip() -> None:
    b = Breaker(3)
    trips = [
        b.observe("cat config.yaml", 1, "cat: config.yaml: No such file or directory")
        for _ in range(5)
    ]
    assert [t is not None for t in trips] == [False, False, True, False, False]


def test_three_different_shapes_do_not_trip() -> None:
    b = Breaker(3)
    assert b.observe("python3 -c 'import leftpadx'", 1, MODULE_MISSING) is None
    assert b.observe("cat notes.txt", 1, "cat: notes.txt: No such file or directory") is None
    assert b.observe("python3 t.py", 1, "SyntaxError: invalid syntax") is None


def test_three_different_missing_files_do_not_trip() -> None:
    b = Breaker(3)
    for name in ("a", "b", "c"):
        assert (
            b.observe(f"ls {name}", 2, f"ls: cannot access '{name}': No such file or directory")
            is None
        )


def test_an_unrelated_success_does_not_reset_a_streak() -> None:
    b = Breaker(3)
    b.observe("python3 -c 'import leftpadx'", 1, MODULE_MISSING)
    b.observe("ls", 0, "a.py")
    b.observe("python3 -m leftpadx", 1, "/usr/bin/python3: No module named leftpadx")
    b.observe("python3 --version", 0, "Python 3.11")
    assert b.observe("pip install leftpadx", 1, PIP_MISSING) is not None


def test_a_success_touching_the_missing_thing_resets_its_streak() -> None:
    b = Breaker(3)
    b.observe("python3 -c 'import leftpadx'", 1, MODULE_MISSING)
    b.observe("python3 -c 'import leftpadx'", 1, MODULE_MISSING)
    b.observe("python3 -c 'import leftpadx; print(1)'", 0, "1")
    assert b.observe("python3 -c 'import leftpadx'", 1, MODULE_MISSING) is None


def test_the_same_command_succeeding_resets_a_generic_streak() -> None:
    b = Breaker(3)
    b.observe("python3 t.py", 1, "AssertionError")
    b.observe("python3 t.py", 1, "AssertionError")
    b.observe("python3 t.py", 0, "ok")
    assert b.observe("python3 t.py", 1, "AssertionError") is None


def test_real_shell_failures_are_recognised(tmp_path: Path) -> None:
    # The texts are the real programs', not transcriptions of them.
    def run(cmd: str) -> tuple[int, str]:
        p = subprocess.run(["sh", "-c", cmd], cwd=tmp_path, capture_output=True, text=True)
        return p.returncode, p.stdout + p.stderr

    py = sys.executable
    assert shape_of("leftpadx", *run("leftpadx")) == "command not found: leftpadx"
    assert shape_of("x", *run(f"{py} -c 'import leftpadx'")) == "No module named leftpadx"
    assert shape_of("x", *run(f"{py} -m leftpadx")) == "No module named leftpadx"
    assert shape_of("x", *run("cat nothere.txt")) == "No such file or directory: nothere.txt"
    assert shape_of("x", *run("ls sub/nothere.txt")) == "No such file or directory: nothere.txt"


def test_a_read_only_sandbox_mount_is_the_permission_wall() -> None:
    out = "touch: cannot touch '/usr/x': Read-only file system"
    assert shape_of("touch /usr/x", 1, out) == "Permission denied"


def test_no_network_is_one_shape_whatever_the_host() -> None:
    a = shape_of("curl https://a.example", 6, "curl: (6) Could not resolve host: a.example")
    b = shape_of(
        "git clone https://b.example/r",
        128,
        "fatal: unable to access: Could not resolve host: b.example",
    )
    assert a == b == "No network"
