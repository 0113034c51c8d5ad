"""DG202 for a @task function another module of the project defines: its body has no DAG in its
own module, so a clock read there is reported in the DAG file, at the call that makes it a task
of a DAG on a recurring schedule, naming where the body reads the clock."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.rules.test_imported_values import _check, _write

EXPORT = """\
from datetime import datetime
from airflow.sdk import task


@task
def export_orders():
    day = datetime.now().strftime("%Y-%m-%d")
    return f"s3://exports/orders/{day}.parquet"
"""
KEYED_EXPORT = """\
from airflow.sdk import task


@task
def export_orders(data_interval_start=None):
    day = data_interval_start.strftime("%Y-%m-%d")
    return f"s3://exports/orders/{day}.parquet"
"""
ORDERS = """\
import pendulum
from airflow.sdk import DAG
from {module} import export_orders

with DAG("orders", schedule={schedule}, start_date=pendulum.datetime(2025, 1, 1, tz="UTC"), catchup=False):
    export_orders(){noqa}
"""
CALL_LINE = 6


def _dg202(root: Path, files: dict[str, str]):
    _write(root, files)
    return [f for f in _check(root, root).findings if f.code == "DG202"]


def _orders(module: str = "tasks.export", schedule: str = '"@hourly"', noqa: str = "") -> str:
    return ORDERS.format(module=module, schedule=schedule, noqa=noqa)


@pytest.mark.parametrize("module", ["tasks.export", "dags.tasks.export"])
def test_a_clock_read_in_an_imported_task_is_reported_at_the_call(tmp_path, module):
    found = _dg202(tmp_path, {"dags/tasks/__init__.py": "", "dags/tasks/export.py": EXPORT,
                              "dags/orders.py": _orders(module)})
    assert len(found) == 1, [f"{f.path}:{f.line} {f.message}" for f in found]
    finding = found[0]
    assert Path(finding.path).name == "orders.py"
    assert (finding.line, finding.column) == (CALL_LINE, 5)
    assert finding.message.startswith("task 'export_orders' calls datetime.now() (")
    assert "dags/tasks/export.py:7) in its body" in finding.message.replace("\\", "/")
    assert not finding.fixable


def test_an_imported_task_keyed_on_its_interval_is_silent(tmp_path):
    assert _dg202(tmp_path, {"dags/tasks/export.py": KEYED_EXPORT, "dags/orders.py": _orders()}) == []


def test_a_clock_read_only_logged_in_an_imported_task_is_silent(tmp_path):
    # The same exemptions as a task of the DAG's own file: a duration in a log line is harmless.
    logged = KEYED_EXPORT.replace('    return', '    print("exported at", datetime.now())\n    return')
    assert _dg202(tmp_path, {"dags/tasks/export.py": "from datetime import datetime\n" + logged,
                             "dags/orders.py": _orders()}) == []


def test_an_imported_task_called_through_its_module_is_reported(tmp_path):
    orders = _orders().replace("from tasks.export import export_orders", "from tasks import export") \
        .replace("    export_orders()", "    export.export_orders()")
    found = _dg202(tmp_path, {"dags/tasks/__init__.py": "", "dags/tasks/export.py": EXPORT, "dags/orders.py": orders})
    assert [(Path(f.path).name, f.line, f.column) for f in found] == [("orders.py", CALL_LINE, 5)]
    assert "export.py:7)" in found[0].message


def test_a_task_decorator_of_another_library_is_silent(tmp_path):
    other = EXPORT.replace("from airflow.sdk import task", "from prefect import task")
    assert _dg202(tmp_path, {"dags/tasks/export.py": other, "dags/orders.py": _orders()}) == []


def test_an_imported_task_never_called_is_silent(tmp_path):
    orders = _orders().replace("    export_orders()", "    pass")
    assert _dg202(tmp_path, {"dags/tasks/export.py": EXPORT, "dags/orders.py": orders}) == []


def test_an_imported_task_of_a_dag_on_no_schedule_is_silent(tmp_path):
    # A manual run may have no logical date: the clock is all it has (as for a same-file task).
    assert _dg202(tmp_path, {"dags/tasks/export.py": EXPORT, "dags/orders.py": _orders(schedule="None")}) == []


def test_noqa_on_the_call_line_silences_it(tmp_path):
    orders = _orders(noqa="  # noqa: DG202")
    assert _dg202(tmp_path, {"dags/tasks/export.py": EXPORT, "dags/orders.py": orders}) == []


def test_two_dags_calling_an_imported_task_get_one_finding_each_at_their_calls(tmp_path):
    orders = _orders() + """
with DAG("orders_daily", schedule="@daily", start_date=pendulum.datetime(2025, 1, 1, tz="UTC"), catchup=False):
    export_orders.override(task_id="export_daily")()
"""
    refunds = _orders().replace('"orders"', '"refunds"')
    found = _dg202(tmp_path, {"dags/tasks/export.py": EXPORT, "dags/orders.py": orders, "dags/refunds.py": refunds})
    assert sorted((Path(f.path).name, f.line, f.column) for f in found) == [
        ("orders.py", CALL_LINE, 5), ("orders.py", CALL_LINE + 3, 5), ("refunds.py", CALL_LINE, 5)]
    assert sum("task 'export_daily' calls datetime.now()" in f.message for f in found) == 1


def test_every_clock_read_of_an_imported_task_is_named_in_its_one_finding(tmp_path):
    two_reads = EXPORT.replace("from datetime import datetime", "import time\nfrom datetime import datetime") \
        .replace("    return f\"", "    stamp = int(time.time())\n    return f\"{stamp}/").replace("orders/{day}", "{day}")
    found = _dg202(tmp_path, {"dags/tasks/export.py": two_reads, "dags/orders.py": _orders()})
    assert len(found) == 1
    message = found[0].message.replace("\\", "/")
    assert "calls datetime.now() (" in message and "export.py:8) and time.time() (" in message
    assert "export.py:9) in its body" in message


def test_a_helper_of_the_imported_task_in_its_own_module_is_followed(tmp_path):
    helper = EXPORT.replace("@task\n", "def _today():\n    return datetime.now().date()\n\n\n@task\n") \
        .replace("datetime.now().strftime", "_today().strftime")
    found = _dg202(tmp_path, {"dags/tasks/export.py": helper, "dags/orders.py": _orders()})
    assert [(Path(f.path).name, f.line) for f in found] == [("orders.py", CALL_LINE)]


# A PythonOperator's `python_callable=` naming a project module's function: its body is read there
# the same way, and reported at the operator.
EXPORT_CALLABLE = EXPORT.replace("from airflow.sdk import task\n\n\n@task\n", "\n\n")
OPERATOR_ORDERS = """\
import pendulum
from airflow.sdk import DAG
from airflow.providers.standard.operators.python import PythonOperator
{imports}

with DAG("orders", schedule={schedule}, start_date=pendulum.datetime(2025, 1, 1, tz="UTC"), catchup=False):
    PythonOperator(task_id="export", python_callable={callable}){noqa}
"""
OPERATOR_LINE = 7


def _operator_orders(imports="from tasks.export import export_orders", callable="export_orders",
                     schedule='"@hourly"', noqa=""):
    return OPERATOR_ORDERS.format(imports=imports, callable=callable, schedule=schedule, noqa=noqa)


@pytest.mark.parametrize("imports, callable", [
    ("from tasks.export import export_orders", "export_orders"),
    ("from tasks.export import export_orders as run_export", "run_export"),
    ("from tasks import export", "export.export_orders"),
])
def test_an_imported_python_callable_reading_the_clock_is_reported_at_the_operator(tmp_path, imports, callable):
    found = _dg202(tmp_path, {"dags/tasks/__init__.py": "", "dags/tasks/export.py": EXPORT_CALLABLE,
                              "dags/orders.py": _operator_orders(imports, callable)})
    assert [(Path(f.path).name, f.line, f.column) for f in found] == [("orders.py", OPERATOR_LINE, 5)], \
        [f"{f.path}:{f.line} {f.message}" for f in found]
    assert found[0].message.startswith("task 'export' calls datetime.now() (")
    assert "export.py:5) in its body" in found[0].message.replace("\\", "/")


def test_an_imported_python_callable_keyed_on_its_interval_is_silent(tmp_path):
    keyed = KEYED_EXPORT.replace("from airflow.sdk import task\n\n\n@task\n", "\n\n")
    assert _dg202(tmp_path, {"dags/tasks/export.py": keyed, "dags/orders.py": _operator_orders()}) == []


def test_an_imported_python_callable_given_the_interval_in_op_kwargs_is_read_with_it(tmp_path):
    # The parameter is passed by the operator, not looked up in the context: still no clock read.
    keyed = KEYED_EXPORT.replace("from airflow.sdk import task\n\n\n@task\n", "\n\n")
    orders = _operator_orders(callable='export_orders, op_kwargs={"data_interval_start": "{{ ds }}"}')
    assert _dg202(tmp_path, {"dags/tasks/export.py": keyed, "dags/orders.py": orders}) == []


def test_an_imported_python_callable_of_a_dag_on_no_schedule_or_under_noqa_is_silent(tmp_path):
    files = {"dags/tasks/export.py": EXPORT_CALLABLE}
    assert _dg202(tmp_path, {**files, "dags/orders.py": _operator_orders(schedule="None")}) == []
    assert _dg202(tmp_path, {**files, "dags/orders.py": _operator_orders(noqa="  # noqa: DG202")}) == []


def test_a_python_callable_of_another_package_is_not_read(tmp_path):
    # Only the project's own modules are read: a library function has no body here.
    orders = _operator_orders(imports="from time import time", callable="time")
    assert _dg202(tmp_path, {"dags/orders.py": orders}) == []
