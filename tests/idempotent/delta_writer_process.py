"""A Delta Lake writer run as its own process by test_delta_writes.py.

    python delta_writer_process.py LAKE STRATEGY DAY WRITER ROUNDS ROWS START_AT

Writes ROUNDS batches of ROWS rows into day DAY of January 2026 of LAKE's `events` table, each
tagged `WRITER-round` in `v`, after waiting until the epoch time START_AT so that two processes
start together. Prints the tag of each write that returned. With ROUNDS 0 it writes one batch
forever (the kill -9 test stops it).
"""

from __future__ import annotations

import sys
import time
from datetime import datetime, timedelta, timezone

import pyarrow as pa

from dagguard.idempotent import Interval, write_interval

UTC = timezone.utc


def batch(day: int, tag: str, rows: int) -> pa.Table:
    """ROWS rows inside the day, keyed 0..ROWS-1, all tagged `tag`."""
    start = datetime(2026, 1, day, tzinfo=UTC)
    step = 86_400_000_000 // rows
    return pa.table({"k": pa.array(range(rows), pa.int64()),
                     "ts": pa.array([start + timedelta(microseconds=step * i) for i in range(rows)],
                                    pa.timestamp("us", tz="UTC")),
                     "v": pa.array([tag] * rows)})


def main(lake: str, strategy: str, day: int, writer: str, rounds: int, rows: int, start_at: float) -> None:
    interval = Interval(datetime(2026, 1, day, tzinfo=UTC), datetime(2026, 1, day + 1, tzinfo=UTC))
    time.sleep(max(0.0, start_at - time.time()))
    number = 0
    while rounds == 0 or number < rounds:
        tag = f"{writer}-{number}"
        write_interval(f"delta://{lake}", "events", batch(day, tag, rows), interval, time_column="ts",
                       strategy=strategy, unique_key=["k"] if strategy == "merge" else None,
                       delete_missing=strategy == "merge")
        print(tag, flush=True)
        number += 1


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5]), int(sys.argv[6]),
         float(sys.argv[7]))
