"""DG201 on lakehouse writes from Python: delta-rs's write_deltalake(..., mode="append") adds the
rows again on every re-run; its other modes, and writes through dagguard.idempotent, do not."""

from __future__ import annotations

import pytest

from tests.lint_helpers import lint

TASK = """\
import deltalake
from deltalake import write_deltalake
from deltalake import write_deltalake as wd
from airflow.sdk import DAG, task
from dagguard.idempotent import write_interval

with DAG("d", schedule="@daily"):
    @task
    def store():
        rows = fetch()
        {statement}

    store()
"""
APPENDS = {
    "imported": 'write_deltalake("s3://lake/orders", rows, mode="append")',
    "module": 'deltalake.write_deltalake("s3://lake/orders", rows, mode="append")',
    "aliased": 'wd("s3://lake/orders", rows, mode="append")',
}
NOT_APPENDS = {
    "overwrite": 'write_deltalake("s3://lake/orders", rows, mode="overwrite")',
    "default_refuses_a_rerun": 'write_deltalake("s3://lake/orders", rows)',
    "mode_unknown": 'write_deltalake("s3://lake/orders", rows, mode=MODE)',
    "through_dagguard": 'write_interval("delta+s3://lake", "orders", rows, interval, time_column="ts")',
}


def _dg201(tmp_path, statement: str) -> list[str]:
    return [f.message for f in lint(tmp_path, TASK.format(statement=statement)) if f.code == "DG201"]


@pytest.mark.parametrize("statement", APPENDS.values(), ids=APPENDS.keys())
def test_an_append_to_a_delta_table_not_keyed_on_the_interval_is_dg201(tmp_path, statement):
    messages = _dg201(tmp_path, statement)
    assert len(messages) == 1 and "writes with write_deltalake(..., mode='append')" in messages[0]


@pytest.mark.parametrize("statement", NOT_APPENDS.values(), ids=NOT_APPENDS.keys())
def test_other_modes_and_dagguard_writes_are_not(tmp_path, statement):
    assert _dg201(tmp_path, statement) == []


def test_a_local_function_named_write_deltalake_is_not_delta_rs(tmp_path):
    source = TASK.replace("from deltalake import write_deltalake\n", "").replace(
        "with DAG", "def write_deltalake(*args, **kwargs):\n    pass\n\n\nwith DAG")
    assert [f for f in lint(tmp_path, source.format(statement=APPENDS["imported"])) if f.code == "DG201"] == []
