"""Run checks on a thread with a large stack.

libcst parses and generates code recursively: a 500-term `a + b + ...` chain exceeds Python's
default recursion limit, and a few thousand nested brackets overflow the 8 MiB main-thread
stack inside the native parser (a segfault, not an exception). One worker thread with a big
stack and a high recursion limit turns both into ordinary work or ordinary exceptions.
"""

from __future__ import annotations

import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Optional, TypeVar

T = TypeVar("T")

STACK_BYTES = 512 * 1024 * 1024  # reserved address space; only touched pages use memory
RECURSION_LIMIT = 200_000

_executor: Optional[ThreadPoolExecutor] = None
_lock = threading.Lock()


def _deep_executor() -> ThreadPoolExecutor:
    global _executor
    with _lock:
        if _executor is None:
            previous = threading.stack_size()
            threading.stack_size(STACK_BYTES)
            try:
                _executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dagguard-deep")
                # Start the thread now, while the large stack size is in effect.
                _executor.submit(lambda: None).result()
            finally:
                threading.stack_size(previous)
            sys.setrecursionlimit(max(sys.getrecursionlimit(), RECURSION_LIMIT))
        return _executor


def run_deep(function: Callable[..., T], *args: object) -> T:
    """Call `function(*args)` on the large-stack thread and return its result."""
    return _deep_executor().submit(function, *args).result()
