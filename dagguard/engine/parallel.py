"""Check files in a pool of processes when there are enough of them to pay for it.

A worker process costs about half a second of imports (libcst, the model, the rules) before its
first file, and a file costs ~25 ms: below MIN_FILES_PER_JOB files per worker the pool is
slower than checking in-process. Results come back in the order of `files`, so the output does
not depend on the number of jobs; each result carries the per-file facts (DAG sites, noqa) the
cross-file rules need. Workers are spawned, not forked: the parent's large-stack checker thread
(deep_stack.py) would not exist in a forked child.
"""

from __future__ import annotations

import multiprocessing
import os
from itertools import repeat
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Callable, Iterator, Optional, Sequence, TypeVar

T = TypeVar("T")
A = TypeVar("A")

MIN_FILES_PER_JOB = 25
CHUNK_FILES = 8  # files sent to a worker at a time: fewer round trips, still balanced


def available_cores() -> int:
    """The cores this process may run on (a container's or taskset's limit included)."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):  # not on Linux
        return max(os.cpu_count() or 1, 1)


def effective_jobs(requested: Optional[int], file_count: int, per_job: int = MIN_FILES_PER_JOB) -> int:
    """How many processes to use: all cores by default, fewer when there are few files."""
    wanted = requested if requested is not None else available_cores()
    return max(1, min(wanted, file_count // per_job))


def map_in_order(function: Callable[..., T], items: Sequence[A], *shared: object,
                 jobs: Optional[int] = None, per_job: int = MIN_FILES_PER_JOB) -> Iterator[T]:
    """`function(item, *shared)` for every item, in order; in a process pool when each worker
    gets at least `per_job` items.

    `function` and `shared` must be picklable (a module-level function, frozen settings).
    """
    workers = effective_jobs(jobs, len(items), per_job)
    if workers == 1:
        yield from (function(item, *shared) for item in items)
        return
    done = 0
    context = multiprocessing.get_context("spawn")
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            for result in pool.map(function, items, *(repeat(value) for value in shared),
                                   chunksize=min(CHUNK_FILES, per_job)):
                done += 1
                yield result
    except BrokenProcessPool:  # a worker was killed (out of memory, a signal): finish in-process
        yield from (function(item, *shared) for item in items[done:])
