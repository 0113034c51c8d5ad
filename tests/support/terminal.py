"""Run a command under a pseudo-terminal of a given size, as a user's terminal would run it."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
from pathlib import Path
from typing import Mapping, Optional


def run_in_terminal(args: list[str], cwd: Path, columns: int = 80, rows: int = 24,
                    env: Optional[Mapping[str, str]] = None, stdout_tty: bool = True,
                    stderr_tty: bool = True, timeout: float = 120, prelude: str = "") -> tuple[int, str, str]:
    """Run `dagguard *args` with stdout and/or stderr on a pty, after the Python statements in
    `prelude`; returns (exit code, what the terminal showed, what went to the other streams)."""
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    environment = {k: v for k, v in os.environ.items()
                   if k not in ("NO_COLOR", "COLUMNS", "LINES", "CI", "GITHUB_ACTIONS")}
    environment.update(env or {}, TERM="xterm-256color")
    process = subprocess.Popen(
        [sys.executable, "-c", f"{prelude}\nfrom dagguard.cli import main\nmain()", *args], cwd=cwd, env=environment, stdin=subprocess.DEVNULL,
        stdout=terminal if stdout_tty else subprocess.PIPE, stderr=terminal if stderr_tty else subprocess.PIPE,
    )
    os.close(terminal)
    shown = bytearray()
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # EIO: the last writer closed the terminal
            break
        if not chunk:
            break
        shown.extend(chunk)
    other_out, other_err = process.communicate(timeout=timeout)
    os.close(controller)
    other = (other_out or b"") + (other_err or b"")
    return process.returncode, shown.decode("utf-8", errors="replace"), other.decode("utf-8", errors="replace")
