"""The bell and the notifications reach a real terminal: the app runs in a pty (Textual's own
Linux driver, its writer thread), one approval is asked, and the raw bytes the terminal received
are read on the host side. The control (`notify = false`) proves the check can fail."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import sys
import termios
import time
from pathlib import Path

CHILD = """
import sys, threading, time
from pathlib import Path
from cerveau_tui.app.app import CerveauApp
from cerveau_tui.app.screens.approval import ApprovalScreen
from cerveau_tui.config import Settings
from cerveau_tui.loop.approver import ApprovalRequest

settings = Settings(workspace=Path(sys.argv[1]), notify=sys.argv[2] == "on")
app = CerveauApp(settings, save_setting=lambda k, v: None)

def ask():
    time.sleep(0.5)
    app.approver.approve(ApprovalRequest(call_id="c1", tool="bash", summary="ls", reason="r"))

def watch():
    for _ in range(400):
        time.sleep(0.05)
        if isinstance(app.screen, ApprovalScreen) and app.screen.on_screen:
            time.sleep(0.5)
            break
    app.call_from_thread(app.exit, 0)

threading.Thread(target=ask, daemon=True).start()
threading.Thread(target=watch, daemon=True).start()
app.run()
app.stop_session()
"""

RING = b"\x07\x1b]9;cerveau: approval needed: bash\x07\x1b]777;notify;cerveau;approval needed: bash\x07"


def _terminal_bytes(tmp_path: Path, notify: str) -> bytes:
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {**os.environ, "TERM": "xterm-256color"}
    pid, fd = pty.fork()
    if pid == 0:  # the child: the app, on the pty as its terminal
        os.execve(sys.executable, [sys.executable, str(script), str(ws), notify], env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    out, end = b"", time.monotonic() + 60
    while time.monotonic() < end:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.waitpid(pid, 0)
    os.close(fd)
    return out


def test_the_terminal_receives_the_bell_and_both_notifications(tmp_path: Path) -> None:
    raw = _terminal_bytes(tmp_path, "on")
    assert b"Allow bash?" in raw  # the dialog was drawn: the run reached the point that matters
    assert RING in raw


def test_with_notify_off_the_terminal_receives_neither(tmp_path: Path) -> None:
    raw = _terminal_bytes(tmp_path, "off")
    assert b"Allow bash?" in raw
    assert b"\x1b]9;" not in raw and b"\x1b]777;" not in raw
