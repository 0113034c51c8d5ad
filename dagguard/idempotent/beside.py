"""Work done on a thread beside the write: the batch's checksum and bound values while SQLite
surveys the interval's stored times. sqlite3 lets go of the GIL while a statement runs, and
numpy inside its kernels, so on two cores the two run at once."""

from __future__ import annotations

import threading
from typing import Callable, TypeVar

T = TypeVar("T")


def beside(compute: Callable[[], T], name: str = "dagguard-beside") -> Callable[[], T]:
    """Start `compute` on a thread; the function returned waits for it and answers its result,
    or raises its error. Wait for it on every path, so that nothing outlives the write."""
    outcome: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            outcome.append(compute())
        except BaseException as exc:  # handed to the waiter
            failure.append(exc)

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()

    def wait() -> T:
        thread.join()
        if failure:
            raise failure[0]
        return outcome[0]

    return wait
