"""benchmarks/idempotent_writes.py runs every case on every engine, and checks each write.

No timing is asserted: a few hundred rows only show that the script still works and that its
check of the written intervals catches a write that did not happen.
"""

from __future__ import annotations

import importlib.util
import json
import sqlite3
import sys

import pytest

from tests.conftest import REPO_ROOT
from tests.support.postgres import PostgresUnavailable, find_bindir, skip_or_fail


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location(
        "idempotent_writes_benchmark", REPO_ROOT / "benchmarks" / "idempotent_writes.py")
    module = importlib.util.module_from_spec(spec)
    # dataclasses look their module up in sys.modules while the module runs.
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules[spec.name]


def run(bench, tmp_path, monkeypatch, *options: str) -> list[dict]:
    monkeypatch.setattr(bench, "RESULTS_DIR", tmp_path / "results")
    assert bench.main(["--rows", "300", "--runs", "1", "--workdir", str(tmp_path), *options]) == 0
    (written,) = (tmp_path / "results").glob("idempotent_writes-*.json")
    return json.loads(written.read_text())["results"]


def expected_labels(bench, hand) -> set[str]:
    return {case.label for case in bench.cases(bench.STRATEGIES, hand)}


def assert_measured_against_hand(bench, result, hand) -> None:
    """Every case ran, and every strategy and scenario written by hand has its ratio."""
    assert "skipped" not in result, result.get("skipped")
    assert set(result["best_seconds"]) == expected_labels(bench, hand)
    assert all(seconds > 0 for seconds in result["best_seconds"].values())
    assert set(result["ratios_to_hand"]) == {f"{s}/{sc}" for s in hand for sc in bench.SCENARIOS}
    for label, ratio in result["ratios_to_hand"].items():
        assert ratio == result["best_seconds"][label] / result["best_seconds"][bench.HAND + label]


@pytest.mark.parametrize("form", ["arrow", "tuples"])
def test_every_case_runs_on_the_embedded_engines(bench, tmp_path, monkeypatch, form):
    results = run(bench, tmp_path, monkeypatch, "--engines", "sqlite", "duckdb", "--input", form)
    assert [r["engine"] for r in results] == ["sqlite", "duckdb"]
    for result in results:
        assert_measured_against_hand(bench, result, bench.STRATEGIES)


@pytest.mark.postgres
def test_every_case_runs_on_postgres_with_the_table_options(bench, tmp_path, monkeypatch):
    try:
        find_bindir()
    except PostgresUnavailable as exc:
        skip_or_fail(exc)
    results = run(bench, tmp_path, monkeypatch, "--engines", "postgres", "--key-index", "plain",
                  "--pg-fillfactor", "50", "--pg-setting", "work_mem=8MB")
    (result,) = results
    assert_measured_against_hand(bench, result, bench.STRATEGIES)
    assert {"plain key index", "fillfactor 50", "work_mem=8MB"} <= set(result["notes"])


def test_the_check_refuses_an_interval_the_write_left_out(bench):
    inputs = bench.make_inputs(50, "tuples", 1.0)
    conn = sqlite3.connect(":memory:", isolation_level=None)
    for statement in bench.schema("sqlite"):
        conn.execute(statement)
    bench.plain_sqlite(conn, inputs.other, "tuples")
    with pytest.raises(AssertionError, match="interval 2026-01-02 holds 0 rows"):
        bench.check_written(conn, inputs, changed=False)
    bench.plain_sqlite(conn, inputs.target, "tuples")
    bench.check_written(conn, inputs, changed=False)
    # The same number of rows with the unchanged values is not the changed interval.
    with pytest.raises(AssertionError, match="interval 2026-01-02 holds 50 rows summing to"):
        bench.check_written(conn, inputs, changed=True)


def test_sqlite_without_a_unique_key_has_no_hand_written_upsert(bench, tmp_path, monkeypatch):
    # INSERT ... ON CONFLICT (k) needs a unique index on k: merge is measured alone.
    (result,) = run(bench, tmp_path, monkeypatch, "--engines", "sqlite", "--key-index", "plain")
    assert_measured_against_hand(bench, result, ("replace", "overwrite_partition"))
    assert {"merge/first", "merge/unchanged", "merge/changed"} <= set(result["best_seconds"])


@pytest.mark.parametrize("strategy", ["replace", "merge", "overwrite_partition"])
@pytest.mark.parametrize("engine", ["sqlite", "duckdb"])
def test_the_hand_written_equivalents_write_the_interval(bench, tmp_path, engine, strategy):
    # Each hand-written statement set, run on a table holding both intervals, leaves the other
    # interval alone and the target holding exactly the rows given (first, then changed).
    import duckdb

    inputs = bench.make_inputs(40, "arrow", 1.0)
    conn = (sqlite3.connect(tmp_path / "t.db", isolation_level=None) if engine == "sqlite"
            else duckdb.connect(str(tmp_path / "t.duckdb")))
    for statement in bench.schema(engine):
        conn.execute(statement)
    hand = bench.hand_sqlite if engine == "sqlite" else bench.hand_duckdb
    bench.plain_sqlite(conn, inputs.other, "arrow") if engine == "sqlite" else bench.plain_duckdb(
        conn, inputs.other, "arrow")
    hand(conn, inputs.target, "arrow", strategy)
    bench.check_written(conn, inputs, changed=False)
    hand(conn, inputs.changed, "arrow", strategy)
    bench.check_written(conn, inputs, changed=True)


def test_delta_is_measured_against_its_hand_written_writes(bench, tmp_path, monkeypatch):
    # Delta's strategies each against delta-rs's own write by hand (a predicate overwrite of the
    # interval or of the day, DeltaTable.merge), every scenario, checked like the SQL engines'.
    pytest.importorskip("deltalake")
    (result,) = run(bench, tmp_path, monkeypatch, "--engines", "delta")
    assert_measured_against_hand(bench, result, bench.STRATEGIES)
    table = bench.format_table([result], bench.STRATEGIES)
    assert "x hand" in table and "no hand" not in table
    # delta-rs works in this process: its CPU seconds are measured against the hand-written ones.
    assert set(result["cpu_ratios_to_hand"]) == set(result["ratios_to_hand"])
    assert "CPU seconds x hand" in table


def test_a_delta_rerun_starts_from_its_own_strategy_s_commit(bench, tmp_path):
    # Each strategy's unchanged and changed cases start from a table whose last commit that
    # strategy made (a rerun of overwrite_partition finds its own commit in the log, not replace's).
    pytest.importorskip("deltalake")
    import json as _json

    from deltalake import DeltaTable

    inputs = bench.make_inputs(30, "arrow", 1.0)
    rig = bench.delta_rig(tmp_path, bench.Setup("arrow"))
    for strategy in bench.STRATEGIES:
        template = bench.full_template(rig, strategy)
        rig.prepare(template, [inputs.other], inputs, strategy)
        (last,) = DeltaTable(str(tmp_path / f"{template}.delta" / bench.TABLE)).history(limit=1)
        assert _json.loads(last["dagguard"])["strategy"] == strategy
        handle = rig.fresh(template)
        bench.check_written(handle.conn, inputs, changed=False)
        rig.discard(handle)


def test_iceberg_is_measured_against_its_hand_written_writes(bench, tmp_path, monkeypatch):
    # Every Iceberg case runs from its own catalog (the other interval written through dagguard,
    # so the ledger exists; a rerun's interval written by its own strategy) and is checked.
    pytest.importorskip("pyiceberg")
    (result,) = run(bench, tmp_path, monkeypatch, "--engines", "iceberg")
    assert "skipped" not in result, result.get("skipped")
    assert set(result["ratios_to_hand"]) == {f"{s}/{sc}" for s in bench.STRATEGIES for sc in bench.SCENARIOS}
    assert set(result["cpu_ratios_to_hand"]) == set(result["ratios_to_hand"])


def test_lake_results_without_a_plain_row_print_their_hand_ratios(bench):
    # Iceberg's and Spark's results have no plain row: the table shows only the x hand ratios.
    times = {case.label: [2.0 if case.hand else 3.0] for case in bench.lake_cases(bench.STRATEGIES)}
    result = bench.lake_result("iceberg", ["note"], times)
    assert result["ratios_to_hand"] == {f"{s}/{sc}": 1.5 for s in bench.STRATEGIES for sc in bench.SCENARIOS}
    table = bench.format_table([result], bench.STRATEGIES)
    assert "1.50x 3.000/2.000s !" in table and "first x plain" not in table

    cpu = {case.label: [1.0 if case.hand else 1.1] for case in bench.lake_cases(bench.STRATEGIES)}
    with_cpu = bench.lake_result("iceberg", ["note"], times, cpu)
    assert set(with_cpu["cpu_ratios_to_hand"]) == set(result["ratios_to_hand"])
    assert "CPU seconds x hand: replace 1.10x / 1.10x / 1.10x" in bench.format_table([with_cpu], bench.STRATEGIES)


def test_the_profile_splits_a_delta_write_into_its_phases(capsys):
    # benchmarks/idempotent_profile.py prices a Delta write's guarantees too: the fingerprint,
    # the ledger table, the rerun check, the count of replaced rows.
    pytest.importorskip("deltalake")
    from benchmarks import idempotent_profile

    assert idempotent_profile.main(["delta", "overwrite_partition", "unchanged", "--rows", "200", "--runs", "1"]) == 0
    printed = capsys.readouterr().out
    assert "delta overwrite_partition/unchanged, 200 rows" in printed
    for phase in ("checksum", "ledger", "rerun check", "count", "without guarantees"):
        assert f"  {phase}" in printed


def test_every_profile_phase_names_a_function_that_exists():
    # prepare_batch moved from write.py to write_prepare.py and the profile's "validation" read
    # 0.000 s on every engine: each phase's (module, function) must name real code.
    import ast
    from pathlib import Path

    from benchmarks import idempotent_profile

    package = Path(__file__).resolve().parents[2] / "dagguard"
    defined = {(str(path.relative_to(package.parent)).replace("\\", "/"), node.name)
               for path in package.rglob("*.py")
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
               if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for phase, functions in idempotent_profile.PHASES.items():
        for suffix, name in functions:
            assert any(suffix in path and name == function for path, function in defined), (phase, suffix, name)
