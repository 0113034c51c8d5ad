"""DG301 through project helpers: a function called at parse time runs its body then, so the
Variable/Connection reads and hook queries it makes (directly or through the functions it
calls, three deep) are reported at the call, naming the way to the read."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from dagguard.api import check_paths
from dagguard.config import Settings
from tests.lint_helpers import NOW

CONFIG = """
    from airflow.hooks.base import BaseHook
    from airflow.models import Connection, Variable
    from airflow.providers.postgres.hooks.postgres import PostgresHook


    def get_config():
        return {"table": Variable.get("orders_table")}


    def load():
        return _read("x")


    def _read(key):
        return Variable.get(key)


    def warehouse_host():
        return BaseHook.get_connection("warehouse").host


    def secret_uri():
        return Connection.get_connection_from_secrets("api").get_uri()


    def table_names():
        return PostgresHook(postgres_conn_id="warehouse").get_records("SELECT name FROM tables")


    def plain():
        return {"owner": "data"}
"""


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text), encoding="utf-8")


def dg301(root: Path, files: dict[str, str], checked: str = "dags", **kwargs) -> list[tuple[str, int, str]]:
    write(root, {"common/__init__.py": "", **files})
    result = check_paths([root / checked], settings=Settings(config_path=root / "pyproject.toml"), now=NOW,
                         **kwargs)
    assert result.internal_errors == ()
    return [(Path(f.path).name, f.line, f.message) for f in result.findings if f.code == "DG301"]


TAIL = (" when the file is parsed: on every parse of this file the DAG processor hits the metadata DB "
        "or an external system")


def test_a_helper_in_another_module_is_reported_at_the_call(tmp_path):
    found = dg301(tmp_path, {"common/config.py": CONFIG, "dags/orders.py": """
        from airflow.sdk import DAG
        from common.config import get_config

        CONFIG = get_config()

        with DAG("orders", schedule=None):
            pass
    """})
    assert found == [("orders.py", 5, f'`get_config()` ({_shown(tmp_path, "common/config.py")}:8) calls '
                                      'Variable.get("orders_table")' + TAIL)]


@pytest.mark.parametrize(("call", "read"), [
    ("load()", "Variable.get()"),
    ("warehouse_host()", 'BaseHook.get_connection("warehouse")'),
    ("secret_uri()", 'Connection.get_connection_from_secrets("api")'),
    ("table_names()", """a hook's get_records("SELECT name FROM tables")"""),
    ("config.get_config()", 'Variable.get("orders_table")'),
])
def test_every_kind_of_read_is_followed(tmp_path, call, read):
    [(_, line, message)] = dg301(tmp_path, {"common/config.py": CONFIG, "dags/d.py": f"""
        from common import config
        from common.config import load, secret_uri, table_names, warehouse_host

        VALUE = {call}
    """})
    assert line == 5 and f"calls {read}" + TAIL in message


def test_the_message_names_each_function_on_the_way(tmp_path):
    [(_, _, message)] = dg301(tmp_path, {"common/config.py": CONFIG, "dags/d.py": """
        from common.config import load

        X = load()
    """})
    assert message.startswith("`load()` (") and "config.py:12) calls `_read()` (" in message
    assert "config.py:16), which calls Variable.get()" in message


def test_chains_are_followed_three_functions_deep_and_no_deeper(tmp_path):
    chain = {"common/deep.py": """
        from airflow.models import Variable

        def one():
            return two()

        def two():
            return three()

        def three():
            return four()

        def four():
            return Variable.get("far")
    """, "dags/d.py": """
        from common.deep import one, two

        THREE_DEEP = two()
        FOUR_DEEP = one()
    """}
    assert [line for _, line, _ in dg301(tmp_path, chain)] == [4]


def test_recursion_and_helpers_calling_each_other_end(tmp_path):
    found = dg301(tmp_path, {"common/loop.py": """
        from airflow.models import Variable

        def ping(n):
            return pong(n - 1) if n else Variable.get("p")

        def pong(n):
            return ping(n)

        def itself(n):
            return itself(n - 1) if n else None
    """, "dags/d.py": """
        from common.loop import itself, ping

        A = ping(3)
        B = itself(3)
    """})
    assert [(line, message.split(" when")[0]) for _, line, message in found] == [
        (4, f"`ping()` ({_shown(tmp_path, 'common/loop.py')}:5) calls Variable.get(\"p\")")]


def _shown(root: Path, name: str) -> str:
    """How a path outside the working folder is shown."""
    return str(root / name)


def test_one_finding_per_call_site(tmp_path):
    found = dg301(tmp_path, {"common/config.py": CONFIG, "dags/d.py": """
        from common.config import get_config

        A = get_config()
        B = get_config()
        C = [get_config(), get_config()]
        D = get_config()["table"]
    """})
    assert [line for _, line, _ in found] == [4, 5, 6, 6, 7]


def test_a_helper_of_the_same_file(tmp_path):
    [(_, line, message)] = dg301(tmp_path, {"dags/d.py": """
        from airflow.models import Variable

        def settings():
            return {"bucket": Variable.get("bucket")}

        SETTINGS = settings()
    """})
    assert line == 7 and message.startswith(f"`settings()` ({_shown(tmp_path, 'dags/d.py')}:5) calls")


def test_what_runs_only_in_tasks_is_not_followed(tmp_path):
    assert dg301(tmp_path, {"common/config.py": CONFIG, "dags/d.py": """
        from airflow.models import BaseOperator, Variable
        from airflow.providers.standard.operators.python import PythonOperator
        from airflow.sdk import DAG, task
        from common.config import get_config, plain

        def callable_for_a_task():
            return get_config()

        def returns_a_function():
            def later():
                return get_config()
            return later

        class Export(BaseOperator):
            def execute(self, context):
                return get_config()

        LATER = returns_a_function()
        LAZY = lambda: get_config()
        OWNER = plain()

        with DAG("d", schedule=None):
            @task
            def export():
                return get_config()

            export()
            PythonOperator(task_id="p", python_callable=callable_for_a_task)
            Export(task_id="e")
    """}) == []


def test_an_operator_whose_init_reads_is_reported_where_the_task_is_made(tmp_path):
    found = dg301(tmp_path, {"plugins/operators.py": """
        from airflow.models import BaseOperator, Variable

        class LoadOperator(BaseOperator):
            def __init__(self, table, **kwargs):
                super().__init__(**kwargs)
                self.schema = Variable.get("schema")

            def execute(self, context):
                return Variable.get("at_run_time")
    """, "dags/d.py": """
        from airflow.sdk import DAG
        from plugins.operators import LoadOperator

        with DAG("d", schedule=None):
            LoadOperator(task_id="load", table="orders")
    """})
    assert [(name, line) for name, line, _ in found] == [("d.py", 6)]
    assert 'calls Variable.get("schema")' in found[0][2]


def test_static_methods_and_memoised_helpers_are_followed_other_decorators_are_not(tmp_path):
    found = dg301(tmp_path, {"common/settings.py": """
        import functools
        from airflow.models import Variable
        from mylib import retry

        class Settings:
            @staticmethod
            def bucket():
                return Variable.get("bucket")

            def instance(self):
                return Variable.get("not_followed")

        @functools.lru_cache(maxsize=None)
        def cached():
            return Variable.get("cached")

        @retry
        def wrapped():
            return Variable.get("unknown_decorator")
    """, "dags/d.py": """
        from common.settings import Settings, cached, wrapped

        A = Settings.bucket()
        B = cached()
        C = wrapped()
        D = Settings().instance()
    """})
    assert [line for _, line, _ in found] == [4, 5]


def test_default_values_are_evaluated_when_the_def_runs(tmp_path):
    found = dg301(tmp_path, {"common/config.py": CONFIG, "dags/d.py": """
        from airflow.models import Variable
        from common.config import get_config

        def build(table=Variable.get("table"), config=get_config()):
            return table, config
    """})
    assert [line for _, line, _ in found] == [5, 5]
    assert found[0][2].startswith("Variable.get() runs at module level") and found[1][2].startswith("`get_config()`")


def test_an_at_dag_functions_body_is_reported_once(tmp_path):
    """Its body is read as parse-time code already: its call is not followed into it again."""
    found = dg301(tmp_path, {"dags/d.py": """
        from airflow.models import Variable
        from airflow.sdk import dag

        @dag(schedule=None)
        def configured():
            table = Variable.get("table")

        configured()
    """})
    assert [line for _, line, _ in found] == [7]


def test_a_dag_factory_reading_a_variable_is_reported_at_its_call(tmp_path):
    found = dg301(tmp_path, {"common/factory.py": """
        from airflow.models import Variable
        from airflow.sdk import DAG

        def make_dag(dag_id):
            return DAG(dag_id, schedule=Variable.get("schedule", None))
    """, "dags/d.py": """
        from common.factory import make_dag

        orders = make_dag("orders")
    """})
    assert [(name, line) for name, line, _ in found] == [("d.py", 4)]


def test_the_helpers_module_reports_only_what_runs_when_it_is_imported(tmp_path):
    found = dg301(tmp_path, {"common/config.py": CONFIG + """
    TABLE = Variable.get("at_import")
    """, "dags/d.py": """
        from common.config import get_config

        CONFIG = get_config()
    """}, checked=".")
    written = (tmp_path / "common" / "config.py").read_text().splitlines()
    at_import = written.index('TABLE = Variable.get("at_import")') + 1
    assert sorted((name, line) for name, line, _ in found) == [("config.py", at_import), ("d.py", 4)]


def test_unknown_functions_stay_silent(tmp_path):
    assert dg301(tmp_path, {"dags/d.py": """
        import json
        from vendor.settings import load_settings

        SETTINGS = load_settings()
        DATA = json.loads("{}")
    """}) == []


def test_noqa_on_the_call_line(tmp_path):
    found = dg301(tmp_path, {"common/config.py": CONFIG, "dags/d.py": """
        from common.config import get_config

        A = get_config()  # noqa: DG301
        B = get_config(
        )  # the finding is on the line the call starts
    """})
    assert [line for _, line, _ in found] == [5]


def test_a_cached_result_is_redone_when_the_helper_changes(tmp_path):
    files = {"common/config.py": CONFIG, "dags/d.py": "from common.config import get_config\n\nC = get_config()\n"}
    cache = tmp_path / "cache"
    assert len(dg301(tmp_path, files, cache_dir=cache)) == 1
    write(tmp_path, {"common/config.py": CONFIG.replace('Variable.get("orders_table")', '"orders"')})
    assert dg301(tmp_path, files | {"common/config.py": CONFIG.replace('Variable.get("orders_table")', '"orders"')},
                 cache_dir=cache) == []


def test_a_helper_with_several_reads_is_one_finding_that_counts_them(tmp_path):
    [(_, line, message)] = dg301(tmp_path, {"common/env.py": """
        from airflow.models import Variable

        def env():
            return {"a": Variable.get("a"), "b": Variable.get("b"), "c": _c()}

        def _c():
            return Variable.get("c")
    """, "dags/d.py": """
        from common.env import env

        ENV = env()
    """})
    assert line == 4 and 'calls Variable.get("a") (and 2 more such reads) when' in message
