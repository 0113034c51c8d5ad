"""Work done on a thread beside the write: a fingerprint while the rows go in, or while the
database surveys the interval. The engines' C code (sqlite3's step, DuckDB's and numpy's
kernels) lets go of the GIL, so on two cores the two run at once."""

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
