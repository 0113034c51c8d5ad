"""Delta Lake's fingerprint overlapped with the write, on and off, in one process.

Interleaved, N times: the hand-written predicate overwrite of a 1M-row day, dagguard's replace
with the fingerprint computed while delta-rs writes (a first write, then a changed rewrite), and
the same with delta_notes.may_repeat forced true, which computes the fingerprint before the
commit as dagguard did before. Prints the best and median wall and CPU seconds of each.

    python benchmarks/delta_overlap.py 12      # run from the repository root
"""

import datetime as dt
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import deltalake
import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from dagguard.idempotent import DeltaLake, Interval, write_interval
from dagguard.idempotent.engines import delta_write

UTC = dt.timezone.utc
N = int(sys.argv[1]) if len(sys.argv) > 1 else 12
n = 1_000_000


def rows(day, amount):
    base = dt.datetime(2026, 1, day, tzinfo=UTC).timestamp() * 1e6
    return pa.table(
        {
            "k": pa.array(np.arange(n) + day * n, pa.int64()),
            "ts": pa.array((base + np.arange(n) * 86_000).astype("int64"), pa.timestamp("us", tz="UTC")),
            "ds": pa.array([dt.date(2026, 1, day)] * n, pa.date32()),
            "v": pa.array([f"v{i}" for i in range(n)]),
            "amount": pa.array(np.full(n, amount)),
        }
    )


D1 = Interval(dt.datetime(2026, 1, 1, tzinfo=UTC), dt.datetime(2026, 1, 2, tzinfo=UTC))
D2 = Interval(dt.datetime(2026, 1, 2, tzinfo=UTC), dt.datetime(2026, 1, 3, tzinfo=UTC))
other, target, changed = rows(1, 1.0), rows(2, 1.0), rows(2, 2.0)
work = tempfile.mkdtemp()
sch = pa.schema(
    [
        pa.field("k", pa.int64(), nullable=False),
        pa.field("ts", pa.timestamp("us", tz="UTC"), nullable=False),
        ("ds", pa.date32()),
        ("v", pa.string()),
        ("amount", pa.float64()),
    ]
)
tmpl = work + "/tmpl"
deltalake.DeltaTable.create(tmpl + "/events", schema=sch)
write_interval(DeltaLake(tmpl), "events", other, D1, time_column="ts")
tmpl2 = work + "/tmpl2"
shutil.copytree(tmpl, tmpl2)
write_interval(DeltaLake(tmpl2), "events", target, D2, time_column="ts")
real = delta_write.may_repeat
res = {}


def run(name, t, f):
    lake = work + "/run"
    shutil.rmtree(lake, ignore_errors=True)
    shutil.copytree(t, lake)
    w = time.perf_counter()
    c = time.process_time()
    f(lake)
    res.setdefault(name, []).append((time.perf_counter() - w, time.process_time() - c))


pred = "ts >= '2026-01-02T00:00:00Z' AND ts < '2026-01-03T00:00:00Z'"
for i in range(N):
    for scen, t, data in (("first", tmpl, target), ("changed", tmpl2, changed)):
        run(
            f"{scen} hand",
            t,
            lambda l: deltalake.write_deltalake(l + "/events", data, mode="overwrite", predicate=pred),
        )
        delta_write.may_repeat = real
        run(
            f"{scen} overlapped",
            t,
            lambda l: write_interval(DeltaLake(l), "events", data, D2, time_column="ts"),
        )
        delta_write.may_repeat = lambda *a: True
        run(f"{scen} serial", t, lambda l: write_interval(DeltaLake(l), "events", data, D2, time_column="ts"))
        delta_write.may_repeat = real
for k, v in res.items():
    w = [x[0] for x in v]
    c = [x[1] for x in v]
    print(
        f"{k:20s} wall min {min(w):.3f} med {statistics.median(w):.3f}  cpu min {min(c):.3f} med {statistics.median(c):.3f}"
    )
shutil.rmtree(work, ignore_errors=True)
