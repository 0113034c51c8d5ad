"""A writer run as its own process by the crash and concurrency tests.

    python writer_process.py URL STRATEGY MODE START_AT [DAY TAG REPEATS]

MODE `kill-after-first-write` SIGKILLs the process right after the first statement that
changes the target (the DELETE, or a MERGE; on Iceberg the OVERWRITE whose files are written),
before commit;
MODE `slow` sleeps after each statement so that a concurrent writer overlaps. The writer waits
until the epoch time START_AT so that two processes start together. DAY (1), TAG ("new") and
REPEATS (1): write January DAY's interval REPEATS times with `v` = "TAG-k", sleeping a little
between statements, so that two writers tagged apart race many times.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from datetime import datetime, timezone

from dagguard.idempotent.connections import connect_url
from dagguard.idempotent.engines import engine_for
from dagguard.idempotent.interval import Interval
from dagguard.idempotent.ledger import RunInfo
from dagguard.idempotent.write import WriteSpec, prepare_batch, write_batch
from dagguard.idempotent.checksum import batch_checksum

UTC = timezone.utc


def main(url: str, strategy: str, mode: str, start_at: float, day: int = 1, tag: str = "new",
         repeats: int = 1) -> None:
    import random

    engine = engine_for(connect_url(url))
    spec = WriteSpec.build("events", strategy, "ts", ["k"], strategy == "merge", "ds")
    interval = Interval(datetime(2026, 1, day, tzinfo=UTC), datetime(2026, 1, day + 1, tzinfo=UTC))
    rows = [{"k": k, "ts": datetime(2026, 1, day, k, tzinfo=UTC), "v": f"{tag}-{k}"} for k in range(1, 6)]
    batch = prepare_batch(spec, rows, None, interval)

    def observer(number: int, sql: str) -> None:
        if mode == "kill-after-first-write" and sql.startswith(("DELETE", "MERGE", "UPDATE", "INSERT", "OVERWRITE")):
            os.kill(os.getpid(), signal.SIGKILL)
        if mode == "slow":
            time.sleep(0.3)
        if mode == "race":
            time.sleep(random.uniform(0, 0.05))

    time.sleep(max(0.0, start_at - time.time()))
    for _ in range(repeats):
        write_batch(engine, spec, batch, interval, batch_checksum(batch), RunInfo(), observer)
    engine.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]),
         *(int(sys.argv[5]), sys.argv[6], int(sys.argv[7])) if len(sys.argv) > 5 else ())
