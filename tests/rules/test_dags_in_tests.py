"""Schedule rules on DAGs built inside pytest tests and fixtures (issue 21, pattern F4): pytest
calls them, the DAG processor never does, so their schedule means nothing. A DAG at module level
of a test-named file, or in a test the file itself calls, is still scheduled."""

from __future__ import annotations

import pytest

from tests.lint_helpers import codes, lint

SCHEDULE_RULES = {"DG101", "DG102", "DG103", "DG105", "DG107"}

# Each: (file name, code). DG105 for a DAG with no schedule; DG101-DG103 for one with a
# recurring schedule and catchup.
UNSCHEDULED = {
    "test_function_in_tests_folder": ("tests/groups/check_groups.py", """
        from airflow import DAG


        def test_group_has_all_tasks():
            with DAG(dag_id="group_probe") as dag:
                pass
            assert dag.task_ids == []
    """),
    "test_function_in_test_named_file": ("dags/test_orders.py", """
        import pendulum
        from airflow.sdk import DAG


        def test_orders_dag_loads():
            dag = DAG("orders_probe", schedule="@hourly", catchup=True,
                      start_date=pendulum.datetime(2020, 1, 1, tz="UTC"))
            assert dag.dag_id == "orders_probe"
    """),
    "test_method_of_a_class": ("pipeline_test.py", """
        from airflow.sdk import DAG


        class TestPipeline:
            def test_builds(self):
                with DAG("pipeline_probe") as dag:
                    pass
                assert dag is not None
    """),
    "unittest_setup_hook": ("tests/test_legacy.py", """
        import unittest

        from airflow import DAG


        class LegacyTest(unittest.TestCase):
            def setUp(self):
                self.dag = DAG("legacy_probe", schedule_interval="@daily")
    """),
    "fixture_in_any_file": ("plugins/fixtures.py", """
        import pytest
        from airflow.sdk import DAG


        @pytest.fixture(scope="module")
        def probe_dag():
            with DAG("fixture_probe", schedule="@daily") as dag:
                yield dag
    """),
    "fixture_imported_by_name": ("conftest.py", """
        from pytest import fixture as make_fixture
        from airflow.sdk import DAG


        @make_fixture
        def probe_dag():
            return DAG("fixture_probe")
    """),
    "dag_in_a_helper_inside_a_test": ("tests/test_nested.py", """
        from airflow.sdk import DAG


        def test_nested():
            def build():
                return DAG("nested_probe", schedule="@daily")

            assert build().dag_id == "nested_probe"
    """),
}


@pytest.mark.parametrize("version", ["2", "3"])
@pytest.mark.parametrize("case", sorted(UNSCHEDULED))
def test_schedule_rules_are_silent_on_a_test_dag(tmp_path, case, version):
    name, code = UNSCHEDULED[case]
    found = set(codes(lint(tmp_path, code, name=name, airflow_version=version)))
    assert not found & SCHEDULE_RULES, found


STILL_SCHEDULED = {
    # A DAG at module level: the DAG processor makes it, whatever the file is called.
    "module_level_dag_in_test_named_file": ("dags/test_exports.py", """
        from airflow.sdk import DAG

        with DAG("test_exports"):
            pass
    """),
    # A test function the file calls itself runs when the file is parsed.
    "test_called_at_module_level": ("tests/test_called.py", """
        from airflow.sdk import DAG


        def test_build():
            return DAG("called_probe")


        dag = test_build()
    """),
    # `test_...` outside a test module is any function: a factory whose callers may be elsewhere.
    "test_named_factory_in_dags_folder": ("dags/factory.py", """
        from airflow.sdk import DAG


        def test_pipeline(dag_id):
            with DAG(dag_id) as dag:
                pass
            return dag
    """),
    # A fixture-looking decorator from another library is not pytest's.
    "other_librarys_fixture": ("dags/loader.py", """
        from mylib import fixture
        from airflow.sdk import DAG


        @fixture
        def probe_dag():
            return DAG("probe")
    """),
}


@pytest.mark.parametrize("case", sorted(STILL_SCHEDULED))
def test_dg105_still_fires_outside_tests(tmp_path, case):
    name, code = STILL_SCHEDULED[case]
    assert "DG105" in codes(lint(tmp_path, code, name=name))


def test_a_tests_folder_above_the_project_does_not_count(tmp_path):
    # The project lives in a folder called `tests`: its DAG factories are not tests.
    project = tmp_path / "tests" / "project"
    project.mkdir(parents=True)
    (project / "pyproject.toml").write_text("[tool.dagguard]\n", encoding="utf-8")
    code = """
        from airflow.sdk import DAG


        def test_pipeline(dag_id):
            return DAG(dag_id)
    """
    assert "DG105" in codes(lint(project, code, name="dags/factory.py"))


def test_a_recurring_test_dag_is_silent_but_a_module_level_twin_is_not(tmp_path):
    code = """
        import pendulum
        from airflow import DAG

        START = pendulum.datetime(2020, 1, 1, tz="UTC")

        with DAG("nightly", schedule_interval="@daily", start_date=START):
            pass


        def test_nightly_twin():
            with DAG("nightly_twin", schedule_interval="@daily", start_date=START) as dag:
                pass
            assert dag
    """
    found = lint(tmp_path, code, name="tests/test_nightly.py", airflow_version="2")
    assert {f.code for f in found} >= {"DG101", "DG102", "DG103"}
    assert all(f.line == 7 for f in found if f.code in SCHEDULE_RULES), [(f.code, f.line) for f in found]
