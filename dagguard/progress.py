"""The progress bar of `dagguard check`: on stderr, on a terminal, for runs that take a while."""

from __future__ import annotations

import os
import sys
import time
from typing import Any, Mapping, Optional, TextIO

DELAY_SECONDS = 1.0  # quicker runs finish before a bar would be worth drawing


def wants_progress(human_format: bool, quiet: bool, stderr: TextIO = sys.stderr,
                   environ: Mapping[str, str] = os.environ) -> bool:
    """A bar only for a person watching: stderr is a terminal, not CI, a human output format."""
    return human_format and not quiet and stderr.isatty() and "CI" not in environ and environ.get("TERM") != "dumb"


class DelayedProgressBar:
    """Called after each checked file; draws a transient rich bar once the run has taken
    DELAY_SECONDS, so short runs print nothing extra (rich is imported only then)."""

    def __init__(self, delay: Optional[float] = None) -> None:
        self._started = time.monotonic()
        self._delay = DELAY_SECONDS if delay is None else delay
        self._bar: Optional[Any] = None
        self._task: Any = None

    def __call__(self, done: int, total: int) -> None:
        if self._bar is None:
            if done >= total or time.monotonic() - self._started < self._delay:
                return
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

            self._bar = Progress(TextColumn("Checking"), BarColumn(), MofNCompleteColumn(),
                                 console=Console(stderr=True), transient=True)
            self._bar.start()
            self._task = self._bar.add_task("check", total=total)
        self._bar.update(self._task, completed=done)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
