"""A writer run as its own process by the crash and concurrency tests.

    python writer_process.py URL STRATEGY MODE START_AT

MODE `kill-after-first-write` SIGKILLs the process right after the first statement that
changes the target (the DELETE, or a MERGE), before commit;
MODE `slow` sleeps after each statement so that a concurrent writer overlaps. The writer waits
until the epoch time START_AT so that two processes start together.
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
INTERVAL = Interval(datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 2, tzinfo=UTC))
ROWS = [{"k": k, "ts": datetime(2026, 1, 1, k, tzinfo=UTC), "v": f"new-{k}"} for k in range(1, 6)]


def main(url: str, strategy: str, mode: str, start_at: float) -> None:
    engine = engine_for(connect_url(url))
    spec = WriteSpec.build("events", strategy, "ts", ["k"], strategy == "merge", "ds")
    batch = prepare_batch(spec, ROWS, None, INTERVAL)

    def observer(number: int, sql: str) -> None:
        if mode == "kill-after-first-write" and sql.startswith(("DELETE", "MERGE", "UPDATE", "INSERT")):
            os.kill(os.getpid(), signal.SIGKILL)
        if mode == "slow":
            time.sleep(0.3)

    time.sleep(max(0.0, start_at - time.time()))
    write_batch(engine, spec, batch, INTERVAL, batch_checksum(batch), RunInfo(), observer)
    engine.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]))
