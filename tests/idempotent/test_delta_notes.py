"""A Delta write that cannot repeat the interval's last one commits while its checksum is
computed: its commit's note names the ledger row that carries the checksum. What a rerun may
conclude from such notes, after a write killed between its two commits, and from the notes
older dagguard versions wrote (the checksum itself, no probe)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

deltalake = pytest.importorskip("deltalake")
pa = pytest.importorskip("pyarrow")
pytest.importorskip("numpy")

from dagguard.idempotent import DeltaLake, Interval, LedgerError, read_ledger, write_interval  # noqa: E402
from dagguard.idempotent.engines import delta_ledger, delta_write  # noqa: E402
from dagguard.idempotent.engines.delta import DeltaEngine  # noqa: E402
from dagguard.idempotent.identifiers import TableName  # noqa: E402
from dagguard.idempotent.ledger import RunInfo  # noqa: E402
from tests.idempotent.helpers import DAY1, at  # noqa: E402

SCHEMA = pa.schema([("k", pa.int64()), ("ts", pa.timestamp("us", tz="UTC")), ("v", pa.string()),
                    ("amount", pa.float64())])


@pytest.fixture
def lake(tmp_path: Path) -> Path:
    deltalake.DeltaTable.create(str(tmp_path / "events"), schema=SCHEMA)
    return tmp_path


def _batch(amount: float, text: str = "a") -> pa.Table:
    return pa.table({"k": [1, 2], "ts": pa.array([at(1, 1), at(1, 2)], pa.timestamp("us", tz="UTC")),
                     "v": [text, text], "amount": [amount, amount]}, schema=SCHEMA)


def _write(lake: Path, rows: pa.Table, **options):
    return write_interval(f"delta://{lake}", "events", rows, DAY1, time_column="ts", **options)


def _table(lake: Path) -> deltalake.DeltaTable:
    return deltalake.DeltaTable(str(lake / "events"))


def _newest_note(lake: Path) -> dict:
    return json.loads(_table(lake).history(limit=1)[0]["dagguard"])


def _rows(lake: Path) -> list[tuple]:
    return sorted(tuple(r.values()) for r in _table(lake).to_pyarrow_table().to_pylist())


def _refuse_ledger_appends(monkeypatch) -> None:
    """The process dies (here: fails) between the data commit and its ledger row."""
    real = deltalake.write_deltalake

    def refuse(target, *args, **kwargs):
        if "_dagguard" in getattr(target, "table_uri", str(target)):
            raise OSError("killed before the ledger row")
        return real(target, *args, **kwargs)

    monkeypatch.setattr("deltalake.write_deltalake", refuse)


def _rows_read(monkeypatch) -> list[int]:
    """Counts the reads of the interval's rows a rerun makes to decide."""
    calls: list[int] = []
    real = delta_write._interval_holds

    def counted(*args):
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(delta_write, "_interval_holds", counted)
    return calls


def test_a_first_write_names_its_ledger_row_which_carries_the_checksum(lake, monkeypatch):
    first = _write(lake, _batch(1.0), run=RunInfo(dag_id="d", run_id="r1", try_number=2))
    recorded = _newest_note(lake)
    entry = read_ledger(f"delta://{lake}").entries[-1]
    assert recorded["checksum"] is None and entry.checksum == first.checksum and entry.run_id == "r1"
    assert (recorded["ledger_row"]["run_id"], recorded["ledger_row"]["try_number"]) == ("r1", 2)
    last = delta_ledger.last_write(DeltaEngine(DeltaLake(str(lake))), TableName.parse("events"), DAY1)
    assert last.link == recorded["ledger_row"] and last.checksum == first.checksum
    # The rerun finds its checksum through that row: recognised from the log, rows unread.
    reads = _rows_read(monkeypatch)
    again = _write(lake, _batch(1.0), run=RunInfo(dag_id="d", run_id="r1", try_number=3))
    assert (again.rows_inserted, again.rows_deleted) == (0, 0) and _table(lake).version() == 1 and not reads


def test_a_changed_batch_of_as_many_rows_is_told_from_its_probe_and_written(lake):
    _write(lake, _batch(1.0))
    changed = _write(lake, _batch(2.0))
    recorded = _newest_note(lake)
    assert (changed.rows_inserted, changed.rows_deleted) == (2, 2) and _table(lake).version() == 2
    assert recorded["checksum"] is None and "ledger_row" in recorded  # written before its checksum was known
    assert {r[3] for r in _rows(lake)} == {2.0}


def test_a_batch_the_probe_cannot_tell_apart_is_fingerprinted_first(lake, monkeypatch):
    _write(lake, _batch(1.0, "a"))
    # Only a text column differs, which the probe leaves out: the checksum decides, before the commit.
    changed = _write(lake, _batch(1.0, "b"))
    assert (changed.rows_inserted, changed.rows_deleted) == (2, 2)
    assert _newest_note(lake)["checksum"] == changed.checksum
    reads = _rows_read(monkeypatch)
    again = _write(lake, _batch(1.0, "b"))
    assert (again.rows_inserted, again.rows_deleted) == (0, 0) and _table(lake).version() == 2 and not reads


@pytest.mark.parametrize("strategy", ["replace", "merge"])
def test_a_write_killed_before_its_ledger_row_never_makes_a_rerun_skip(lake, monkeypatch, strategy):
    options = {"strategy": strategy, "unique_key": "k"}
    _write(lake, _batch(1.0), **options)
    with monkeypatch.context() as patched:
        _refuse_ledger_appends(patched)
        with pytest.raises(LedgerError, match="was committed"):
            _write(lake, _batch(2.0), **options)
    assert {r[3] for r in _rows(lake)} == {2.0} and _table(lake).version() == 2
    # The ledger's last row is still the first batch's: its rerun must write it back, the
    # newest commit naming a ledger row that was never appended.
    back = _write(lake, _batch(1.0), **options)
    assert {r[3] for r in _rows(lake)} == {1.0} and _table(lake).version() == 3
    assert (back.rows_inserted + back.rows_updated) == 2
    # And the write killed on a first write (no ledger row at all) is written again too.
    day2 = _batch(1.0).set_column(1, "ts", pa.array([at(2, 1), at(2, 2)], pa.timestamp("us", tz="UTC")))
    with monkeypatch.context() as patched:
        _refuse_ledger_appends(patched)
        with pytest.raises(LedgerError):
            write_interval(f"delta://{lake}", "events", day2, Interval(at(2), at(3)), time_column="ts", **options)
    again = write_interval(f"delta://{lake}", "events", day2, Interval(at(2), at(3)), time_column="ts", **options)
    # A replace writes it again; a merge finds every row as it is (value by value) and commits nothing.
    assert (again.rows_inserted, _table(lake).version()) == ((2, 5) if strategy == "replace" else (0, 4))
    assert sorted(r[1] for r in _rows(lake)) == [at(1, 1), at(1, 2), at(2, 1), at(2, 2)]
    assert read_ledger(f"delta://{lake}").entries[-1].checksum == again.checksum


def test_a_checksum_that_fails_after_the_commit_is_a_ledger_error_and_the_rerun_writes(lake, monkeypatch):
    with monkeypatch.context() as patched:
        patched.setattr(delta_write, "fingerprint", lambda table: 1 / 0)
        with pytest.raises(LedgerError, match="was committed, but the checksum of its ledger row"):
            _write(lake, _batch(1.0))
    assert _table(lake).version() == 1 and not (lake / "events" / "_dagguard").exists()
    again = _write(lake, _batch(1.0))
    assert again.rows_inserted == 2 and _table(lake).version() == 2


def test_notes_written_by_the_previous_version_are_still_read(lake, monkeypatch):
    """The note an earlier dagguard wrote: the checksum itself, no probe, no ledger row named."""
    engine = DeltaEngine(DeltaLake(str(lake)))
    first = _batch(1.0)
    checksum = delta_write._checksum(engine, None, first)
    old_note = {"table": "events", "interval_start": DAY1.start.isoformat(), "interval_end": DAY1.end.isoformat(),
                "strategy": "replace", "checksum": checksum, "unique_key": [], "delete_missing": False,
                "partition_column": None, "time_column": "ts"}
    deltalake.write_deltalake(str(lake / "events"), first, mode="overwrite", predicate="ts >= '2026-01-01'",
                              commit_properties=deltalake.CommitProperties(
                                  custom_metadata={"dagguard": json.dumps(old_note)}))
    delta_ledger.record_write(engine, RunInfo(), TableName.parse("events"), DAY1, "replace", (2, 2, 0, 0), checksum)
    reads = _rows_read(monkeypatch)
    again = _write(lake, _batch(1.0))
    assert (again.rows_inserted, again.rows_deleted) == (0, 0) and _table(lake).version() == 1 and not reads
    # Without a probe to compare, a changed batch is fingerprinted first, and written.
    changed = _write(lake, _batch(2.0))
    assert (changed.rows_inserted, changed.rows_deleted) == (2, 2) and _newest_note(lake)["checksum"] == changed.checksum
    assert {r[3] for r in _rows(lake)} == {2.0}


def test_a_note_without_a_checksum_counts_only_through_the_ledger_row_it_names():
    from types import SimpleNamespace

    from dagguard.idempotent.engines.delta_ledger import LastWrite, row_link
    from dagguard.idempotent.engines.delta_notes import may_repeat, note, repeats

    spec = SimpleNamespace(table="events", strategy="replace", unique_key=(), delete_missing=False,
                           partition_column=None, time_column="ts")
    named = row_link(at(5, 1), "r1", 1)
    theirs = note(spec, DAY1, None, "p1", named)
    ours = note(spec, DAY1, "2:delta1.6-a.b", "p1")
    assert repeats(theirs, ours, LastWrite("2:delta1.6-a.b", named))
    # The named row was never appended (the writer died): the last row is another write's.
    other = LastWrite("2:delta1.6-a.b", row_link(at(4, 1), "r0", 1))
    assert not repeats(theirs, ours, other) and may_repeat(theirs, other, "p2", 2)
    # Linked, the probes decide; a row count the checksum contradicts needs no note.
    assert not may_repeat(theirs, LastWrite("2:delta1.6-a.b", named), "p2", 2)
    assert may_repeat(theirs, LastWrite("2:delta1.6-a.b", named), "p1", 2)
    assert not may_repeat(None, LastWrite("3:delta1.6-a.b", named), "p1", 2)
    assert not may_repeat(theirs, None, "p1", 2)
