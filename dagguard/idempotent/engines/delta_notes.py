"""What a Delta write's commit records of it (its note: the commit metadata `dagguard`), and what
a later write of the same rows reads back from the table's log.

A note names the write's scope and options, its batch's probe (arrow/probe.py) and either the
batch's checksum or, for a write committed before its fingerprint was known, the ledger row that
carries it (`ledger_row`: that row's written_at, run_id and try_number). Such a note counts as
carrying the checksum only while that row is the interval's last ledger entry: a write killed
between its commit and its ledger row leaves a note naming a row that does not exist, and the
rows are then compared, never assumed.
"""

from __future__ import annotations

import json
from typing import Any

from dagguard.idempotent.engines.delta_ledger import LastWrite

# The commit metadata key holding a write's note; how far back the log is searched for the
# newest commit touching a write's rows (first the few newest, which usually hold it).
NOTE_KEY = "dagguard"
_FIRST_LOOK = 4
_HISTORY = 100
# The keys two notes of the same write agree on (notes written before probes and ledger links
# hold exactly these).
_WRITE_KEYS = ("table", "interval_start", "interval_end", "strategy", "checksum", "unique_key", "delete_missing",
               "partition_column", "time_column")


def note(spec: Any, interval: Any, checksum: str | None, probe: str | None,
         ledger_row: dict[str, Any] | None = None) -> dict[str, Any]:
    """What a write's commit records of it: enough to tell that a later rerun would write the
    same (the checksum, or the ledger row holding it), which rows it owned, and its probe."""
    recorded = {"table": str(spec.table), "interval_start": interval.start.isoformat(),
                "interval_end": interval.end.isoformat(), "strategy": spec.strategy, "checksum": checksum,
                "unique_key": list(spec.unique_key), "delete_missing": spec.delete_missing,
                "partition_column": spec.partition_column, "time_column": spec.time_column}
    if probe is not None:
        recorded["probe"] = probe
    if ledger_row is not None:
        recorded["ledger_row"] = ledger_row
    return recorded


def commit_properties(recorded: dict[str, Any]) -> Any:
    """Commit on top of the version read or not at all; the commit carries the note."""
    from deltalake import CommitProperties

    return CommitProperties(max_commit_retries=0, custom_metadata={NOTE_KEY: json.dumps(recorded)})


def newest_note(delta_table: Any, ours: dict[str, Any]) -> dict[str, Any] | None:
    """The note of the newest commit that touched the rows `ours` owns, read from the table's
    log newest first over dagguard's commits of other intervals. None when that commit is not
    dagguard's (an UPDATE, OPTIMIZE, a writer outside dagguard) or none is found among the last
    _HISTORY commits."""
    seen = 0
    for limit in (_FIRST_LOOK, _HISTORY):
        entries = delta_table.history(limit=limit)
        for entry in entries[seen:]:
            try:
                theirs = json.loads(entry[NOTE_KEY])
            except (KeyError, TypeError, ValueError):
                return None
            if not _disjoint(theirs, ours):
                return theirs
        if len(entries) < limit:
            return None
        seen = len(entries)
    return None


def repeats(newest: dict[str, Any] | None, ours: dict[str, Any], last: LastWrite | None) -> bool:
    """Is `newest` (the newest commit touching our rows) the same write as ours (same batch,
    strategy and options)? Then writing it again would change nothing, and the rows need not be
    read: replace, overwrite_partition and merge give the same table when repeated."""
    theirs = _with_checksum(newest, last)
    return theirs is not None and _same_rows(theirs, ours)


def may_repeat(newest: dict[str, Any] | None, last: LastWrite | None, probe: str, count: int) -> bool:
    """May a batch of `count` rows with this probe be the batch of `last`, the interval's last
    ledger entry? Not when there is none, when its checksum counts other rows, or when the
    commit that recorded it (`newest`, linked to it by its checksum or its ledger_row) recorded
    another probe: the rows differ, so the checksums do. Anything unknown answers that it may."""
    if last is None:
        return False
    counted, _, kind = last.checksum.partition(":")
    if kind.startswith("delta") and counted.isdigit() and int(counted) != count:
        return False
    theirs = _with_checksum(newest, last)
    if theirs is None or theirs["checksum"] != last.checksum or "probe" not in theirs:
        return True
    return theirs["probe"] == probe


def _with_checksum(theirs: dict[str, Any] | None, last: LastWrite | None) -> dict[str, Any] | None:
    """`theirs` with its batch's checksum: its own, or that of the ledger row it names when that
    row is `last`; None when the checksum is not known."""
    if theirs is None:
        return None
    if theirs.get("checksum") is not None:
        return theirs
    if last is None or theirs.get("ledger_row") != last.link:
        return None
    return {**theirs, "checksum": last.checksum}


def _same_rows(theirs: dict[str, Any], ours: dict[str, Any]) -> bool:
    """Would our write repeat theirs? The same write does; so does a merge of the batch a
    replace wrote, the interval then holding exactly its rows."""
    if all(theirs.get(key) == ours.get(key) for key in _WRITE_KEYS):
        return True
    same = ("table", "interval_start", "interval_end", "checksum", "time_column")
    return (theirs["strategy"] == "replace" and ours["strategy"] == "merge"
            and all(theirs[key] == ours[key] for key in same))


def _disjoint(first: dict[str, Any], second: dict[str, Any]) -> bool:
    """Do two writes own rows that cannot overlap: the same kind of scope, on the same column,
    over different intervals (or partitions)?"""
    partitioned = [recorded["strategy"] == "overwrite_partition" for recorded in (first, second)]
    if partitioned[0] != partitioned[1]:
        return False
    if partitioned[0]:
        return (first["partition_column"] == second["partition_column"]
                and first["interval_start"][:10] != second["interval_start"][:10])
    return (first["time_column"] == second["time_column"]
            and (first["interval_end"] <= second["interval_start"] or second["interval_end"] <= first["interval_start"]))
