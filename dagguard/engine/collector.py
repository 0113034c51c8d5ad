"""Keep the garbage collector's work proportional to one file, not to the run.

A run keeps long-lived objects (the imported modules, the project index's parsed trees, the
results so far) and makes short-lived cyclic ones for each file (a DAG and its tasks point at
each other). CPython's full collections rescan every tracked object, so the kept trees were
scanned again and again: on Yanan-Gao's 1,525 files a third of the CPU went to the collector
once factories made the index hold the project's modules.

After each file, one collection frees that file's cycles (cheap: everything older is frozen)
and `gc.freeze()` moves what survived out of later scans. Freezing only after that collection
is what keeps a file's garbage from being frozen with the survivors. The run's end unfreezes
everything, so nothing stays out of the collector's reach beyond the run.
(Parsers run with the collector paused: dagguard/model/basics/parsing.py.)
"""

from __future__ import annotations

import gc


def after_file() -> None:
    """Free the finished file's garbage, then keep what is left out of the next files' scans."""
    gc.collect()
    gc.freeze()


def end_of_run() -> None:
    """Hand every frozen object back to the collector (a kept tree the run dropped can go)."""
    gc.unfreeze()

