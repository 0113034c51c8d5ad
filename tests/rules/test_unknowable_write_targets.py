"""DG201/DG203 where the target is not a dataset or not knowable (issue 21, item 11): clears
built at run time, scratch files in the temporary folder, fixed objects replaced whole."""

from __future__ import annotations

import pytest

from tests.lint_helpers import lint

HEAD = """\
import os
import tempfile
from datetime import datetime
from pathlib import Path
import pandas as pd
from airflow.sdk import DAG, task
from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator
from airflow.providers.postgres.hooks.postgres import PostgresHook
from airflow.providers.amazon.aws.hooks.s3 import S3Hook
from airflow.providers.google.cloud.hooks.gcs import GCSHook
from pipeline_settings import TABLE, table_name
"""


def found(tmp_path, body: str, *codes: str) -> list[str]:
    return [f"{f.code} {f.message}" for f in lint(tmp_path, HEAD + body) if f.code in codes]


# --- (a) a clear whose table cannot be read ---------------------------------------------------------

UPSTREAM_CLEARS = {
    "format": '"DROP TABLE IF EXISTS {}".format(TABLE)',
    "percent": '"TRUNCATE TABLE %s" % TABLE',
    "plus": '"TRUNCATE TABLE " + TABLE',
    "fstring_whole_name": 'f"TRUNCATE TABLE {TABLE}"',
    "constant_built_with_format": "CLEAR_SQL",
    "unparseable_drop": '"DROP TABLE dim.customers CASCADE WITH MAGIC ((("',
}


@pytest.mark.parametrize("sql", UPSTREAM_CLEARS.values(), ids=UPSTREAM_CLEARS.keys())
def test_an_upstream_clear_of_an_unreadable_table_may_be_the_target(tmp_path, sql):
    body = f"""
CLEAR_SQL = "DELETE FROM {{}}".format(TABLE)
with DAG("d", schedule="@daily"):
    drop = SQLExecuteQueryOperator(task_id="drop", conn_id="w", sql={sql})
    load = SQLExecuteQueryOperator(task_id="load", conn_id="w", sql="INSERT INTO dim.customers SELECT * FROM raw.c")
    drop >> load
"""
    assert found(tmp_path, body, "DG201", "DG203") == []


def test_an_insert_with_a_readable_target_and_no_clear_is_still_flagged(tmp_path):
    # A task upstream whose SQL is a function's return value is not text built here: not a clear.
    body = """
with DAG("d", schedule="@daily"):
    prepare = SQLExecuteQueryOperator(task_id="prepare", conn_id="w", sql=table_name())
    select = SQLExecuteQueryOperator(task_id="select", conn_id="w", sql="SELECT * FROM raw.c WHERE id = {}".format(TABLE))
    load = SQLExecuteQueryOperator(task_id="load", conn_id="w", sql="INSERT INTO dim.customers SELECT * FROM raw.c")
    prepare >> load
"""
    messages = found(tmp_path, body, "DG201", "DG203")
    assert [m.split(" task")[0] for m in messages] == ["DG201", "DG203"]
    assert "appends to dim.customers with INSERT INTO" in messages[1]


def test_a_partly_known_clear_covers_only_the_names_it_can_spell(tmp_path):
    body = """
with DAG("d", schedule="@daily"):
    SQLExecuteQueryOperator(task_id="other", conn_id="w",
                            sql=f"TRUNCATE TABLE staging_{TABLE}; INSERT INTO events SELECT * FROM raw.e")
    SQLExecuteQueryOperator(task_id="same", conn_id="w",
                            sql=f"TRUNCATE TABLE staging_{TABLE}; INSERT INTO staging_x SELECT * FROM raw.e")
"""
    assert [m.split(" with ")[0] for m in found(tmp_path, body, "DG203")] == ["DG203 task 'other' appends to events"]


def test_a_clear_built_at_run_time_earlier_in_the_callable(tmp_path):
    body = """
with DAG("d", schedule="@daily"):
    @task
    def load_percent(table):
        hook = PostgresHook(postgres_conn_id="w")
        hook.run("TRUNCATE TABLE %s" % table)
        pd.read_csv("rates.csv").to_sql("rates", hook.get_sqlalchemy_engine(), if_exists="append")

    @task
    def load_fstring(table):
        hook = PostgresHook(postgres_conn_id="w")
        hook.run(f"DELETE FROM {table}")
        hook.run("INSERT INTO dim.x SELECT * FROM raw.x")

    @task
    def load_plain():
        hook = PostgresHook(postgres_conn_id="w")
        pd.read_csv("rates.csv").to_sql("rates", hook.get_sqlalchemy_engine(), if_exists="append")

    load_percent("rates")
    load_fstring("dim.x")
    load_plain()
"""
    messages = found(tmp_path, body, "DG201", "DG203")
    assert messages == ["DG201 task 'load_plain' writes with .to_sql(..., if_exists='append') and nothing it "
                        "writes depends on the run's data interval; a re-run or backfill writes the same "
                        "target again"]


# --- (b) scratch files in the temporary folder --------------------------------------------------------

SCRATCH_WRITES = {
    "module_gettempdir_joined": 'pd.DataFrame().to_csv(os.path.join(SCRATCH, "a.csv"))',
    "tmp_plus_name": 'open("/tmp/" + NAME, "w").write("x")',
    "tmp_format": 'pd.DataFrame().to_parquet("/tmp/{}.parquet".format(NAME))',
    "path_divided": 'pd.DataFrame().to_parquet(Path("/tmp") / "c.parquet")',
    "mkdtemp_bound": 'folder = tempfile.mkdtemp()\n        pd.DataFrame().to_csv(f"{folder}/out.csv")',
    "temporary_directory": ('with tempfile.TemporaryDirectory() as tmp:\n            path = os.path.join(tmp, "d.csv")\n'
                            '            with open(path, "w") as out:\n                out.write("x")'),
    "named_temporary_file": ('with tempfile.NamedTemporaryFile("w") as handle:\n'
                             '            pd.DataFrame().to_csv(handle.name)'),
}


@pytest.mark.parametrize("statement", SCRATCH_WRITES.values(), ids=SCRATCH_WRITES.keys())
def test_scratch_files_are_not_datasets(tmp_path, statement):
    body = f"""
SCRATCH = tempfile.gettempdir()
NAME = table_name()
with DAG("d", schedule="@daily"):
    @task
    def export_frame():
        {statement}

    export_frame()
"""
    assert found(tmp_path, body, "DG201") == []


def test_scratch_paths_know_the_temporary_folder(tmp_path):
    import libcst as cst

    from dagguard.model.tasks.callable_tree import CallableTree
    from dagguard.model.basics.scope import function_scope, module_scope
    from dagguard.model.tasks.scratch_paths import ScratchPaths

    module = cst.parse_module(
        "import tempfile, os\n"
        "BASE = tempfile.gettempdir()\n"
        "def f(p):\n"
        "    a = os.path.join(BASE, 'x')\n"
        "    b = '/tmpfiles/x'\n"
        "    c = p\n"
        "    d = '/var/tmp/' + p\n"
        "    e = tempfile.mkstemp()[1]\n"
        "    g = '/data/x'\n"
        "    g = os.path.join('/tmp', 'y')\n"
    )
    function = module.body[2]
    scope = function_scope(function, module_scope(module))
    paths = ScratchPaths(CallableTree(function, scope, module))
    verdicts = {name: paths.is_scratch(cst.Name(name)) for name in "abcdeg"}
    assert verdicts == {"a": True, "b": False, "c": False, "d": True, "e": True, "g": False}


def test_a_local_file_outside_the_temporary_folder_is_still_a_write(tmp_path):
    body = """
with DAG("d", schedule="@daily"):
    @task
    def export_frame():
        pd.DataFrame().to_csv("/data/out/frame.csv")

    export_frame()
"""
    assert len(found(tmp_path, body, "DG201")) == 1


# --- (c) one fixed object replaced whole -----------------------------------------------------------

REPLACED_OBJECTS = {
    "s3_load_file_replace": 'S3Hook().load_file("site/index.html", key="docs/index.html", bucket_name="b", replace=True)',
    "s3_load_string_replace": 'S3Hook().load_string("x", "reports/latest.txt", "b", replace=True)',
    "gcs_upload_fixed_key": 'GCSHook().upload("b", "reports/latest.txt", data="x")',
    "gcs_blob": 'blob = client.bucket("b").blob("site/index.html")\n        blob.upload_from_filename("build/index.html")',
    "boto3_put_object": 'client.put_object(Bucket="b", Key="docs/index.html", Body=b"x")',
}
STILL_FLAGGED = {
    "s3_without_replace_fails_on_rerun": 'S3Hook().load_string("x", key="reports/latest.txt", bucket_name="b")',
    "key_from_the_clock": ('S3Hook().load_string("x", key=f"r/{datetime.now():%Y%m%d}.txt", bucket_name="b", '
                           'replace=True)'),
    "key_not_static": 'GCSHook().upload("b", TABLE, data="x")',
}
OBJECT_BODY = """
with DAG("d", schedule="@daily"):
    @task
    def publish(client):
        {statement}

    publish(None)
"""


@pytest.mark.parametrize("statement", REPLACED_OBJECTS.values(), ids=REPLACED_OBJECTS.keys())
def test_a_fixed_object_replaced_whole_is_not_flagged(tmp_path, statement):
    assert found(tmp_path, OBJECT_BODY.format(statement=statement), "DG201") == []


@pytest.mark.parametrize("statement", STILL_FLAGGED.values(), ids=STILL_FLAGGED.keys())
def test_objects_that_are_not_one_fixed_name_replaced_are_still_flagged(tmp_path, statement):
    messages = found(tmp_path, OBJECT_BODY.format(statement=statement), "DG201")
    assert len(messages) == 1 and messages[0].startswith("DG201 task 'publish' writes with ")


# --- (d) one object per item a loop writes, named after the item -------------------------------------

ITEM_OBJECTS = {
    "s3_load_file_key_from_the_item": ('for local in Path("/logs").rglob("*.log"):\n'
                                       '            S3Hook().load_file(str(local), key=f"logs/{local.name}", '
                                       'bucket_name="b", replace=True)'),
    "boto3_put_object_fields_of_the_row": ('for row_id, created_at, payload in rows:\n'
                                           '            client.put_object(Key=f"d/{created_at.date()}/{row_id}.json", '
                                           'Body=payload)'),
    "key_through_local_names": ('for name in names:\n'
                                '            relative = Path(name).relative_to("/logs")\n'
                                '            key = "archive/" + str(relative)\n'
                                '            client.upload_file(name, "b", key)'),
    "gcs_blob_named_by_format": ('for item in items:\n'
                                 '            blob = client.bucket("b").blob("out/{}.json".format(item.id))\n'
                                 '            blob.upload_from_string(item.body)'),
    "gcs_upload_os_path_join": ('for day in days:\n'
                                '            GCSHook().upload("b", os.path.join("daily", day), data="x")'),
    "s3_key_by_percent": ('for table in tables:\n'
                          '            S3Hook().load_string("x", "dump/%s.csv" % table, "b", replace=True)'),
}
ITEM_STILL_FLAGGED = {
    "s3_without_replace_fails_on_rerun": ('for local in files:\n'
                                          '            S3Hook().load_file(str(local), key=f"logs/{local}", '
                                          'bucket_name="b")'),
    "key_from_the_clock": ('for item in items:\n'
                           '            stamp = datetime.now().isoformat()\n'
                           '            client.put_object(Key=f"out/{stamp}/{item}.json", Body=b"x")'),
    "key_from_a_counter": ('i = 0\n'
                           '        for item in items:\n'
                           '            i += 1\n'
                           '            client.put_object(Key=f"out/part-{i}.json", Body=item)'),
    "key_not_from_the_loop": ('for item in items:\n'
                              '            client.put_object(Key=TABLE, Body=item)'),
    "appended_rows_in_the_same_loop": ('for item in items:\n'
                                       '            client.put_object(Key=f"out/{item}.json", Body=b"x")\n'
                                       '            pd.DataFrame([item]).to_sql("events", None, if_exists="append")'),
    "insert_in_the_same_loop": ('for item in items:\n'
                                '            client.put_object(Key=f"out/{item}.json", Body=b"x")\n'
                                '            PostgresHook().run("INSERT INTO events VALUES (1)")'),
    "delta_append_in_the_same_loop": ('from deltalake import write_deltalake\n'
                                      '        for item in items:\n'
                                      '            client.put_object(Key=f"out/{item}.json", Body=b"x")\n'
                                      '            write_deltalake("s3://b/events", item, mode="append")'),
}
ITEM_BODY = """
with DAG("d", schedule="@daily"):
    @task
    def publish(client, items, rows, names, days, tables, files):
        {statement}

    publish(None, [], [], [], [], [], [])
"""


@pytest.mark.parametrize("statement", ITEM_OBJECTS.values(), ids=ITEM_OBJECTS.keys())
def test_an_object_per_item_named_after_the_item_is_not_flagged(tmp_path, statement):
    assert found(tmp_path, ITEM_BODY.format(statement=statement), "DG201") == []


@pytest.mark.parametrize("statement", ITEM_STILL_FLAGGED.values(), ids=ITEM_STILL_FLAGGED.keys())
def test_loop_writes_that_add_data_or_new_names_are_still_flagged(tmp_path, statement):
    messages = found(tmp_path, ITEM_BODY.format(statement=statement), "DG201")
    assert len(messages) == 1 and messages[0].startswith("DG201 task 'publish' ")


NESTED_WRITER = """
with DAG("d", schedule="@daily"):
    @task
    def publish(client, groups, items):
        def put(batch):
            first = batch[0]
            client.put_object(Key=f"out/{{first.day}}/{{first.id}}.json", Body=b"x")
{calls}
    publish(None, {{}}, [])
"""


@pytest.mark.parametrize("calls", [
    # every call passes a loop's item (through a local name): one object per item, as in a loop
    "        for key in groups:\n            rows = groups[key]\n            put(rows)\n"
    "        for key in list(groups):\n            put(batch=groups.pop(key))\n",
], ids=["items_through_local_names"])
def test_a_nested_writer_called_with_each_loop_item_is_keyed_by_the_item(tmp_path, calls):
    assert found(tmp_path, NESTED_WRITER.format(calls=calls), "DG201") == []


@pytest.mark.parametrize("calls", [
    "        for key in groups:\n            put(items)\n",                    # not the loop's item
    "        for key in groups:\n            put(groups[key])\n        put(items)\n",  # one call outside
    "        put(items)\n",                                                     # no loop at all
], ids=["not_the_item", "one_call_outside_a_loop", "no_loop"])
def test_a_nested_writer_called_with_anything_else_is_still_flagged(tmp_path, calls):
    assert len(found(tmp_path, NESTED_WRITER.format(calls=calls), "DG201")) == 1


HELPER_WRITER = """
def archive(client, batch):
    client.put_object(Key=f"out/{{batch.day}}/{{batch.id}}.json", Body=b"x")

with DAG("d", schedule="@daily"):
    @task
    def publish(client, groups, items):
{calls}
    publish(None, {{}}, [])
"""


@pytest.mark.parametrize("calls, flagged", [
    ("        for key in groups:\n            archive(client, groups[key])\n", 0),
    ("        for key in groups:\n            archive(client, batch=items)\n", 1),
    ("        archive(client, items)\n", 1),
], ids=["the_item", "not_the_item", "no_loop"])
def test_a_same_file_helper_called_with_each_loop_item_is_keyed_by_the_item(tmp_path, calls, flagged):
    # Judged per call: the helper's parameter is one item when this call passes one.
    assert len(found(tmp_path, HELPER_WRITER.format(calls=calls), "DG201")) == flagged


def test_transfers_to_a_fixed_object_replaced_whole(tmp_path):
    body = """
from airflow.providers.amazon.aws.transfers.sql_to_s3 import SqlToS3Operator
from airflow.providers.google.cloud.transfers.local_to_gcs import LocalFilesystemToGCSOperator
from airflow.providers.google.cloud.transfers.gcs_to_local import GCSToLocalFilesystemOperator
with DAG("d", schedule="@daily"):
    LocalFilesystemToGCSOperator(task_id="docs", src="site/index.html", dst="docs/index.html", bucket="b")
    GCSToLocalFilesystemOperator(task_id="scratch", bucket="b", object_name="x", filename="/tmp/x.csv")
    SqlToS3Operator(task_id="replaced", sql_conn_id="w", query="SELECT 1", s3_bucket="b", s3_key="o.csv",
                    replace=True)
    SqlToS3Operator(task_id="kept", sql_conn_id="w", query="SELECT 1", s3_bucket="b", s3_key="o.csv")
"""
    assert [m.split(" (")[0] for m in found(tmp_path, body, "DG201")] == ["DG201 task 'kept'"]


def test_a_fixed_key_passed_to_a_same_file_helper_is_read_there(tmp_path):
    # The helper's parameters are bound to what the task passes when it is static.
    body = """
REPORT_KEY = "content/ips.json"


def upload(body, key, bucket_name):
    S3Hook().load_string(body, key, bucket_name, replace=True)


with DAG("d", schedule="@daily"):
    @task
    def publish_fixed(body):
        upload(body, key=REPORT_KEY, bucket_name="content")

    @task
    def publish_moving(body):
        upload(body, key=f"ips/{datetime.now():%Y%m%d}.json", bucket_name="content")

    publish_fixed("x")
    publish_moving("x")
"""
    assert [m.split(" writes")[0] for m in found(tmp_path, body, "DG201")] == ["DG201 task 'publish_moving'"]
