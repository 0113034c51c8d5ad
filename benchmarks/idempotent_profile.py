"""Where one write_interval case of idempotent_writes.py spends its time, next to its
hand-written equivalent: what the guarantees (validation, checksum, ledger) cost of the ratio.

Each repeat times the hand-written statements and write_interval from fresh copies of the same
prepared database (as idempotent_writes.py does), the write under cProfile; the phases are the
cumulative times of dagguard's functions that do each job:

* validation: prepare_batch (rows outside the interval, naive or NULL times, duplicate keys,
  the partition column), _check_target and check_precision (the batch against the table);
* checksum: write_checksum and the engines' fingerprint / batch_fingerprint (the ledger's
  checksum, and the verification of an unchanged rerun);
* ledger: ensure_ledger, last_checksum, record_write;
* time survey (SQLite): the scan of the stored times around the interval that decides whether
  comparing their text is exact;
* the rest: the engine's statements (lock, delete, load, merge) and Python around them.

"without guarantees" is the write's time less these phases: what the ratio would be if
they were free. The product is not changed to measure it.

    python benchmarks/idempotent_profile.py duckdb replace first
    python benchmarks/idempotent_profile.py postgres merge changed --rows 1000000 --runs 3
    python benchmarks/idempotent_profile.py sqlite merge changed --top 30  # and the profile
    python benchmarks/idempotent_profile.py delta replace first    # delta-rs, a local lake

On Delta Lake the checksum is the numpy fingerprint of the batch (arrow/fingerprint.py); the
ledger is its own small Delta table; "rerun check" is the log read that recognises a rerun and,
after a commit from elsewhere, the interval's rows read back and fingerprinted; "count" is the
count of the rows a write replaces (the files' statistics before and after the commit, or a
query where a file has none). The fingerprint's threads are timed as its call's wall time.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from benchmarks import idempotent_writes as bench  # noqa: E402

# Phase -> (module path suffix, function name) whose cumulative time is that phase's.
PHASES = {
    "validation": [("idempotent/write_prepare.py", "prepare_batch"), ("idempotent/write_spec.py", "_check_target"),
                   ("idempotent/precision.py", "check_precision")],
    "checksum": [("idempotent/checksum.py", "write_checksum"), ("idempotent/checksum.py", "recorded_as"),
                 ("/engines/", "fingerprint"),
                 ("/engines/", "batch_fingerprint")],
    "ledger": [("idempotent/ledger.py", "ensure_ledger"), ("idempotent/ledger.py", "last_checksum"),
               ("idempotent/ledger.py", "record_write")],
    # SQLite: whether every stored time near the interval is in dagguard's own text form (else
    # the exact reading of each), so the DELETE takes exactly the interval's rows.
    "time survey": [("engines/sqlite.py", "_other_forms_near")],
}
# Delta Lake's: the batch's numpy fingerprint, its ledger table, the log read that tells a rerun
# (or the interval's rows read back and compared), the count of the rows a write replaces.
PHASES["checksum"] += [("arrow/fingerprint.py", "fingerprint")]
PHASES["ledger"] += [("engines/delta_ledger.py", "open_ledger"),
                     ("engines/delta_ledger.py", "record_write")]
PHASES["ledger"] += [("engines/delta_ledger.py", "last_write")]
PHASES["rerun check"] = [("engines/delta_notes.py", "newest_note"), ("engines/delta_write.py", "_interval_holds")]
PHASES["count"] = [("engines/delta_query.py", "count_rows"), ("engines/delta_write.py", "stored_rows")]


def phase_seconds(profile: cProfile.Profile) -> dict[str, float]:
    """Cumulative seconds of each phase's functions in `profile`."""
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    totals = dict.fromkeys(PHASES, 0.0)
    for (path, _, name), (_, _, _, cumulative, _) in stats.items():
        for phase, functions in PHASES.items():
            if any(name == wanted and suffix in path for suffix, wanted in functions):
                totals[phase] += cumulative
    return totals


def rig_for(engine: str, workdir: Path, setup: Any) -> tuple[Any, Any]:
    """The benchmark's rig of `engine` and its cleanup (None for the file engines)."""
    if engine == "sqlite":
        return bench.sqlite_rig(workdir, setup), None
    if engine == "duckdb":
        return bench.duckdb_rig(workdir, setup), None
    if engine == "delta":
        return bench.delta_rig(workdir, setup), None
    return bench.postgres_rig(workdir, setup)


def main(argv: list[str] | None = None) -> int:
    """Time and profile one case; print the phases of the best write and both times."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("engine", choices=["sqlite", "duckdb", "postgres", "delta"])
    parser.add_argument("strategy", choices=list(bench.STRATEGIES))
    parser.add_argument("scenario", choices=list(bench.SCENARIOS))
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3, help="repeats; the best of each counts")
    parser.add_argument("--top", type=int, default=0, help="also print the best write's N costliest functions")
    parser.add_argument("--shuffle", action="store_true", help="rows in random order (see idempotent_writes.py)")
    args = parser.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="dagguard-profile-"))
    inputs = bench.make_inputs(args.rows, "arrow", 1.0, args.shuffle)
    rig, cleanup = rig_for(args.engine, workdir, bench.Setup("arrow"))
    try:
        rig.prepare("bench_base", [inputs.other], None)
        if rig.templates_per_strategy:  # (Delta: the rerun starts from its own strategy's write)
            rig.prepare(bench.full_template(rig, args.strategy), [inputs.other], inputs, args.strategy)
        else:
            rig.prepare("bench_full", [inputs.other], inputs)
        hand_case = bench.Case(args.strategy, args.scenario, hand=True)
        best_hand, best = float("inf"), (float("inf"), None)
        for _ in range(args.runs):
            best_hand = min(best_hand, bench.run_case(rig, hand_case, inputs))
            profile = cProfile.Profile()
            seconds = profile_write(rig, args.strategy, args.scenario, inputs, profile)
            if seconds < best[0]:
                best = (seconds, profile)
    finally:
        if cleanup:
            cleanup()
        shutil.rmtree(workdir, ignore_errors=True)
    seconds, profile = best
    phases = phase_seconds(profile)
    print(f"{args.engine} {args.strategy}/{args.scenario}, {args.rows:,} rows, best of {args.runs} (under cProfile)")
    print(f"  hand-written {best_hand:.3f}s; write_interval {seconds:.3f}s = {seconds / best_hand:.2f}x")
    for phase, spent in phases.items():
        print(f"  {phase:<12} {spent:.3f}s  {spent / best_hand:.2f}x of the hand-written time")
    rest = seconds - sum(phases.values())
    print(f"  without guarantees {rest:.3f}s = {rest / best_hand:.2f}x")
    if args.top:
        pstats.Stats(profile).sort_stats("cumulative").print_stats(args.top)
    return 0


def profile_write(rig: Any, strategy: str, scenario: str, inputs: Any, profile: cProfile.Profile) -> float:
    """Seconds of one write_interval under `profile`, from a fresh copy; checked afterwards."""
    handle = rig.fresh("bench_base" if scenario == "first" else bench.full_template(rig, strategy))
    changed = scenario == "changed"
    try:
        started = time.perf_counter()
        profile.enable()
        bench.write_target(handle.conn, inputs, strategy, changed=changed)
        profile.disable()
        seconds = time.perf_counter() - started
        bench.check_written(handle.conn, inputs, changed)
        return seconds
    finally:
        rig.discard(handle)


if __name__ == "__main__":
    sys.exit(main())
