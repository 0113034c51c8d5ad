"""The summary's count of files whose DAGs went unseen, and `dagguard dags --unseen` (issue 21,
item 12): library modules that import airflow are not counted; a DAG file is, with its reason."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dagguard.api import check_paths

REPO = Path(__file__).resolve().parents[2]
NOW = dt.datetime(2026, 11, 30, tzinfo=dt.timezone.utc)
LIBRARY = {
    "lib/tasks.py": """\
        from airflow.providers.standard.operators.python import PythonOperator


        def extract_task(dag):
            return PythonOperator(task_id="extract", python_callable=print, dag=dag)


        def notify(context):
            print(context["dag_run"].run_id, context["dag"].dag_id)
    """,
    "lib/config.py": """\
        from airflow.models import Variable

        BUCKET = Variable.get("bucket", default_var="b")
    """,
    "lib/callbacks.py": """\
        from airflow.utils.email import send_email


        def on_failure(context):
            dag_id = context["dag"].dag_id
            send_email("ops@example.com", f"{dag_id} failed", "")
            update_dag_state(dag_id)


        def update_dag_state(dag_id):
            pass
    """,
    "tests/test_dagbag.py": """\
        from airflow.models import DagBag


        def test_no_import_errors():
            dag_bag = DagBag(dag_folder="dags/", include_examples=False)
            assert not dag_bag.import_errors
            assert dag_bag.get_dag(dag_id="orders") is not None
    """,
    # In the DAGs folder, but a module the DAG file imports: its library.
    "dags/common.py": """\
        from airflow.sdk import Variable

        OWNER = "data"
    """,
    # Imported as a module, nothing in it resolved: still a library.
    "dags/alerts.py": """\
        from airflow.sdk import Variable


        def page(context):
            print(Variable.get("pager"))
    """,
    "dags/orders.py": """\
        import alerts
        from airflow.sdk import DAG
        from common import OWNER
        from lib.tasks import extract_task

        with DAG("orders", schedule="@daily", default_args={"owner": OWNER, "on_failure_callback": alerts.page}) as dag:
            extract_task(dag)
    """,
}
UNSEEN = """\
    import airflow
    from platform_sdk.factory import make_dag

    dag = make_dag("vendor_orders")
"""


def _project(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text))
    return root


def _unseen(root: Path) -> dict[str, str]:
    result = check_paths([root], now=NOW)
    assert len(result.files_without_dags) == len(result.unseen_reasons)
    return {Path(path).relative_to(root).as_posix() if Path(path).is_absolute() else path: reason
            for path, reason in zip(result.files_without_dags, result.unseen_reasons)}


def test_library_modules_are_not_counted_and_the_unseen_dag_file_is(tmp_path):
    root = _project(tmp_path, {**LIBRARY, "dags/vendor.py": UNSEEN})
    assert _unseen(root) == {
        "dags/vendor.py": "calls an imported factory the linter cannot read: platform_sdk.factory.make_dag"}


def test_library_modules_alone_count_nothing(tmp_path):
    assert _unseen(_project(tmp_path, LIBRARY)) == {}


@pytest.mark.parametrize(("text", "reason"), [
    ("import airflow\nfrom platform_sdk import make_dag\nfor team in ('a', 'b'):\n    globals()[team] = make_dag(team)\n",
     "builds DAGs in a loop over globals()"),
    ("import airflow\nfrom platform_sdk import *\nwith DAG('x', schedule=None):\n    pass\n",
     "DAG made from an unresolved name: DAG(...)"),
    ("from airflow.sdk import Variable\n# with DAG('old') as dag: moved to orders.py\nDOC = 'DAG(...)'\n",
     "`DAG(` or `@dag` appears only in a string or comment"),
    ("import airflow\nfrom vendor import build\ndag = build('x')\n",
     "in the DAGs folder; makes its DAG with an imported call the linter cannot read: vendor.build"),
], ids=["globals_loop", "unresolved_name", "only_in_text", "imported_call"])
def test_each_unseen_file_names_its_likely_reason(tmp_path, text, reason):
    (tmp_path / "dags").mkdir()
    (tmp_path / "dags" / "hidden.py").write_text(text)
    assert _unseen(tmp_path) == {"dags/hidden.py": reason}


def test_a_library_in_the_dags_folder_that_nothing_imports_is_not_counted(tmp_path):
    (tmp_path / "dags" / "scrapers").mkdir(parents=True)
    (tmp_path / "dags" / "scrapers" / "indeed.py").write_text(textwrap.dedent("""\
        import requests
        from airflow.models import Variable

        SESSION = requests.Session()


        class Scraper:
            token = Variable.get("token", default_var=None)
    """))
    (tmp_path / "dags" / "scrapers" / "registry.py").write_text(textwrap.dedent("""\
        from airflow.sdk import DAG


        def register(dag: DAG, namespace: dict) -> None:
            globals()[dag.dag_id] = dag
    """))
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_dags.py").write_text(textwrap.dedent("""\
        import airflow
        from tests.helpers import dag_should_contain_tasks


        def test_tasks(dagbag):
            dag_should_contain_tasks(dagbag, dag_id="orders", tasks=["load"])
    """))
    assert _unseen(tmp_path) == {}


def test_dag_construction_text_counts_outside_the_dags_folder_too(tmp_path):
    (tmp_path / "pipelines").mkdir()
    (tmp_path / "pipelines" / "team.py").write_text(textwrap.dedent(UNSEEN))
    (tmp_path / "pipelines" / "helpers.py").write_text("from airflow.sdk import Variable\nX = 1\n")
    assert _unseen(tmp_path) == {
        "pipelines/team.py": "calls an imported factory the linter cannot read: platform_sdk.factory.make_dag"}


def test_a_relative_import_makes_a_library_too(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "factory.py").write_text(
        "from airflow.sdk import DAG\n\ndef make_dag(dag_id):\n    return DAG(dag_id, schedule=None)\n")
    (tmp_path / "pkg" / "uses.py").write_text("from .factory import make_dag\n\ndag = make_dag('x')\n")
    assert "pkg/factory.py" not in _unseen(tmp_path)


def test_dags_unseen_lists_each_file_with_its_reason(tmp_path):
    root = _project(tmp_path, {**LIBRARY, "dags/vendor.py": UNSEEN})
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    run = [sys.executable, "-m", "dagguard", "dags", "--unseen"]
    text = subprocess.run([*run, "."], cwd=root, capture_output=True, text=True, env=env, timeout=120)
    assert text.returncode == 0, text.stderr
    assert text.stdout == ("dags/vendor.py: calls an imported factory the linter cannot read: "
                           "platform_sdk.factory.make_dag\n")
    listed = subprocess.run([*run, "--format", "json", "."], cwd=root, capture_output=True, text=True, env=env,
                            timeout=120)
    assert json.loads(listed.stdout) == [{"path": "dags/vendor.py", "reason": (
        "calls an imported factory the linter cannot read: platform_sdk.factory.make_dag")}]
    summary = subprocess.run([sys.executable, "-m", "dagguard", "check", "."], cwd=root, capture_output=True,
                             text=True, env=env, timeout=120)
    assert "1 file imports airflow and looks like a DAG file but defines no DAG" in summary.stdout


def test_an_import_inside_a_task_function_makes_a_library_too(tmp_path):
    (tmp_path / "dags").mkdir()
    (tmp_path / "dags" / "loaders.py").write_text(
        "import airflow\nfrom vendor import build\n\ndag_like = build('x')\n")
    (tmp_path / "dags" / "orders.py").write_text(textwrap.dedent("""\
        from airflow.sdk import DAG, task

        with DAG("orders", schedule=None):
            @task
            def load():
                from loaders import dag_like
                return dag_like

            load()
    """))
    assert _unseen(tmp_path) == {}
