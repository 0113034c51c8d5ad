"""DG103: `concurrency` was max_active_tasks' name on Airflow 2 only."""

from __future__ import annotations

from tests.lint_helpers import codes, lint

OLD_NAME = """
    from airflow import DAG

    DAG("fan_out", schedule="@hourly", max_active_runs=1, concurrency=4)
"""


def test_concurrency_bounds_tasks_on_airflow_2(tmp_path):
    assert "DG103" not in codes(lint(tmp_path, OLD_NAME, airflow_version="2"))


def test_concurrency_is_rejected_not_counted_on_airflow_3(tmp_path):
    # Airflow 3.3's DAG raises TypeError on `concurrency`: DG106 reports the name, and the DAG
    # still has no max_active_tasks.
    found = codes(lint(tmp_path, OLD_NAME))
    assert "DG103" in found and "DG106" in found


# Issue 21, item 9: one run at a time of one straight chain of tasks never runs two tasks at
# once, so a task limit cannot matter; nor can it when the DAG's widest layer is no wider than
# the limit the fix would set. name -> (code, whether DG103 fires)
HEADER = """\
import pendulum
from airflow.providers.standard.operators.bash import BashOperator
from airflow.sdk import DAG, TaskGroup, chain, dag, task

START = pendulum.datetime(2026, 1, 1, tz="UTC")
"""
CHAINS = {
    "operators_in_a_chain": ("""
with DAG("d", schedule="@daily", start_date=START, max_active_runs=1) as made:
    extract = BashOperator(task_id="extract", bash_command="echo")
    transform = BashOperator(task_id="transform", bash_command="echo")
    load = BashOperator(task_id="load", bash_command="echo")
    extract >> transform >> load

if __name__ == "__main__":
    made.test()
""", False),
    "a_single_task": ("""
with DAG("d", schedule="@daily", start_date=START, max_active_runs=1):
    BashOperator(task_id="only", bash_command="echo")
""", False),
    "taskflow_chain_by_xcom": ("""
@dag(schedule="@daily", start_date=START, max_active_runs=1)
def d():
    @task
    def extract():
        return [1]

    @task
    def load(rows):
        print(len(rows))

    load(extract())

d()
""", False),
    "dag_argument_chain_and_set_downstream": ("""
made = DAG("d", schedule="@daily", start_date=START, max_active_runs=1)
first = BashOperator(task_id="first", bash_command="echo", dag=made)
second = BashOperator(task_id="second", bash_command="echo", dag=made)
third = BashOperator(task_id="third", bash_command="echo", dag=made)
fourth = BashOperator(task_id="fourth", bash_command="echo", dag=made)
first.set_downstream(second)
chain(second, third, fourth)
""", False),
    # `chain(*steps)`: Airflow spreads the list, one straight chain of six tasks.
    "a_spread_list_in_chain": ("""
with DAG("d", schedule="@daily", start_date=START, max_active_runs=1):
    first = BashOperator(task_id="first", bash_command="echo")
    second = BashOperator(task_id="second", bash_command="echo")
    steps = [first, second, BashOperator(task_id="third", bash_command="echo"),
             BashOperator(task_id="fourth", bash_command="echo"), BashOperator(task_id="fifth", bash_command="echo"),
             BashOperator(task_id="sixth", bash_command="echo")]
    chain(*steps)
""", False),
    "a_spread_of_unknown_order_in_chain": ("""
with DAG("d", schedule="@daily", start_date=START, max_active_runs=1):
    chain(*[BashOperator(task_id=f"step_{i}", bash_command="echo") for i in range(6)])
""", True),
    "plain_calls_at_module_level": ("""
import datetime
import os

CONFIG = {"bucket": "lake"}
BUCKET = CONFIG.get("bucket", os.environ.get("BUCKET", "lake"))
TODAY = datetime.datetime.now().strftime("%Y-%m-%d")

with DAG("d", schedule="@daily", start_date=START, max_active_runs=1):
    BashOperator(task_id="a", bash_command="echo " + BUCKET.upper()) >> BashOperator(task_id="b", bash_command="echo")
""", False),
    "a_method_of_an_object_of_unknown_kind": ("""
from plugins.config import settings

TABLES = settings.tables()

with DAG("d", schedule="@daily", start_date=START, max_active_runs=1):
    BashOperator(task_id="a", bash_command="echo") >> BashOperator(task_id="b", bash_command="echo")
""", True),
    "tasks_a_builtin_may_make_through_a_function": ("""
with DAG("d", schedule="@daily", start_date=START, max_active_runs=1):
    def make(name):
        return BashOperator(task_id=name, bash_command="echo")

    BashOperator(task_id="start", bash_command="echo")
    list(map(make, ["orders", "customers"]))
""", True),
    # Two at once is within the limit the fix would set (fix-max-active-tasks, 4): see WIDTHS.
    "fan_out": ("""
with DAG("d", schedule="@daily", start_date=START, max_active_runs=1):
    extract = BashOperator(task_id="extract", bash_command="echo")
    extract >> [BashOperator(task_id="a", bash_command="echo"), BashOperator(task_id="b", bash_command="echo")]
""", False),
    "two_unlinked_tasks": ("""
with DAG("d", schedule="@daily", start_date=START, max_active_runs=1):
    BashOperator(task_id="a", bash_command="echo")
    BashOperator(task_id="b", bash_command="echo")
""", False),
    "chain_of_two_runs_at_once": ("""
with DAG("d", schedule="@daily", start_date=START, max_active_runs=2):
    BashOperator(task_id="a", bash_command="echo") >> BashOperator(task_id="b", bash_command="echo")
""", True),
    "max_active_runs_in_default_args_is_ignored": ("""
with DAG("d", schedule="@daily", start_date=START, default_args={"max_active_runs": 1}):
    BashOperator(task_id="a", bash_command="echo") >> BashOperator(task_id="b", bash_command="echo")
""", True),
    "tasks_made_in_a_loop": ("""
with DAG("d", schedule="@daily", start_date=START, max_active_runs=1):
    previous = BashOperator(task_id="start", bash_command="echo")
    for table in ["orders", "customers"]:
        load = BashOperator(task_id=f"load_{table}", bash_command="echo")
        previous >> load
        previous = load
""", True),
    "a_mapped_task": ("""
with DAG("d", schedule="@daily", start_date=START, max_active_runs=1):
    BashOperator.partial(task_id="load").expand(bash_command=["echo 1", "echo 2"])
""", True),
    "a_mapped_taskflow_task": ("""
@dag(schedule="@daily", start_date=START, max_active_runs=1)
def d():
    @task
    def load(table):
        print(table)

    load.expand(table=["orders", "customers"])

d()
""", True),
    "tasks_a_helper_may_add": ("""
from plugins.tasks import add_quality_checks

with DAG("d", schedule="@daily", start_date=START, max_active_runs=1) as made:
    BashOperator(task_id="load", bash_command="echo")
    add_quality_checks(made)
""", True),
    "an_edge_set_on_some_parses_only": ("""
import os

with DAG("d", schedule="@daily", start_date=START, max_active_runs=1):
    a = BashOperator(task_id="a", bash_command="echo")
    b = BashOperator(task_id="b", bash_command="echo")
    if os.environ.get("STRICT"):
        a >> b
""", True),
    "a_task_made_on_some_parses_only": ("""
import os

with DAG("d", schedule="@daily", start_date=START, max_active_runs=1):
    a = BashOperator(task_id="a", bash_command="echo")
    if os.environ.get("CHECK"):
        a >> BashOperator(task_id="check", bash_command="echo")
""", True),
    "a_task_group_in_the_chain": ("""
with DAG("d", schedule="@daily", start_date=START, max_active_runs=1):
    start = BashOperator(task_id="start", bash_command="echo")
    with TaskGroup("loads") as loads:
        BashOperator(task_id="orders", bash_command="echo")
        BashOperator(task_id="customers", bash_command="echo")
    start >> loads
""", False),  # the group's edges are not read, but edges only add order: at most 3 at once
    "a_task_a_function_makes": ("""
made = DAG("d", schedule="@daily", start_date=START, max_active_runs=1)

def add(name):
    return BashOperator(task_id=name, bash_command="echo", dag=made)

add("a") >> add("b")
""", True),
    "no_task_seen": ("""
DAG("d", schedule="@daily", start_date=START, max_active_runs=1)
""", True),
}


import pytest  # noqa: E402


@pytest.mark.parametrize("case", sorted(CHAINS))
def test_dg103_is_silent_only_on_one_run_of_one_chain(tmp_path, case):
    code, fires = CHAINS[case]
    assert ("DG103" in codes(lint(tmp_path, HEADER + code))) == fires


def tasks(count, prefix, extra=""):
    return [f'BashOperator(task_id="{prefix}_{i}", bash_command="echo"{extra})' for i in range(count)]


def loads(count, prefix="load", extra=""):
    """`count` tasks written one by one (not in a loop), as a list literal's text."""
    return "[" + ", ".join(tasks(count, prefix, extra)) + "]"


def chained(count, prefix, extra=""):
    """`count` tasks in one `a >> b >> ...` expression."""
    return " >> ".join(tasks(count, prefix, extra))


# Issue 21, pattern F1 (extension): with max_active_runs=1, the most tasks one run can have
# running at once is the widest set of tasks none of which depends on another. name -> (code,
# settings, the bound DG103's message states, or None when it is silent)
WIDTHS = {
    "two_lookups_then_a_tail": ("""
with DAG("d", schedule="0 1 * * *", start_date=START, max_active_runs=1):
    a = BashOperator(task_id="pending_a", bash_command="echo")
    b = BashOperator(task_id="pending_b", bash_command="echo")
    [a, b] >> BashOperator(task_id="decide", bash_command="echo") >> BashOperator(task_id="trigger", bash_command="echo")
""", {}, None),
    "fan_out_of_six": (f"""
with DAG("d", schedule="@daily", start_date=START, max_active_runs=1):
    BashOperator(task_id="extract", bash_command="echo") >> {loads(6)}
""", {}, 6),
    "fan_out_of_six_within_a_larger_fix_limit": (f"""
with DAG("d", schedule="@daily", start_date=START, max_active_runs=1):
    BashOperator(task_id="extract", bash_command="echo") >> {loads(6)}
""", {"fix_max_active_tasks": 8}, None),
    "two_layers_of_three": (f"""
with DAG("d", schedule="@daily", start_date=START, max_active_runs=1):
    first = {loads(3, "first")}
    second = {loads(3, "second")}
    chain(first, second)
""", {}, None),
    "a_wide_layer_between_two_tasks": (f"""
with DAG("d", schedule="@daily", start_date=START, max_active_runs=1):
    start = BashOperator(task_id="start", bash_command="echo")
    end = BashOperator(task_id="end", bash_command="echo")
    start >> {loads(20)} >> end
""", {}, 16),
    "a_redundant_edge_keeps_one_chain": ("""
with DAG("d", schedule="@daily", start_date=START, max_active_runs=1):
    a = BashOperator(task_id="a", bash_command="echo")
    b = BashOperator(task_id="b", bash_command="echo")
    c = BashOperator(task_id="c", bash_command="echo")
    a >> b >> c
    a >> c
""", {}, None),
    "always_starts_without_its_upstream": (f"""
with DAG("d", schedule="@daily", start_date=START, max_active_runs=1):
    BashOperator(task_id="first", bash_command="echo") >> {chained(5, "next", ', trigger_rule="always"')}
""", {}, 6),
    "all_done_waits_for_its_upstream": (f"""
with DAG("d", schedule="@daily", start_date=START, max_active_runs=1):
    BashOperator(task_id="first", bash_command="echo") >> {chained(5, "next", ', trigger_rule="all_done"')}
""", {}, None),
    "one_success_through_the_enum": ("""
from airflow.utils.trigger_rule import TriggerRule

with DAG("d", schedule="@daily", start_date=START, max_active_runs=1):
    a = BashOperator(task_id="a", bash_command="echo")
    b = BashOperator(task_id="b", bash_command="echo", trigger_rule=TriggerRule.ONE_SUCCESS)
    c = BashOperator(task_id="c", bash_command="echo", trigger_rule=TriggerRule.ONE_SUCCESS)
    d = BashOperator(task_id="d", bash_command="echo", trigger_rule=TriggerRule.ONE_SUCCESS)
    e = BashOperator(task_id="e", bash_command="echo", trigger_rule=TriggerRule.ONE_SUCCESS)
    a >> b >> c >> d >> e
""", {}, 5),
    "a_trigger_rule_not_statically_known": (f"""
import os

with DAG("d", schedule="@daily", start_date=START, max_active_runs=1):
    BashOperator(task_id="first", bash_command="echo") >> {chained(5, "next", ', trigger_rule=os.environ["RULE"]')}
""", {}, 6),
    "two_runs_at_once_is_not_bounded": (f"""
with DAG("d", schedule="@daily", start_date=START, max_active_runs=2):
    BashOperator(task_id="extract", bash_command="echo") >> {loads(2)}
""", {}, 16),
}


@pytest.mark.parametrize("case", sorted(WIDTHS))
def test_dg103_states_the_bound_one_run_can_reach(tmp_path, case):
    code, settings, bound = WIDTHS[case]
    found = [f for f in lint(tmp_path, HEADER + code, **settings) if f.code == "DG103"]
    if bound is None:
        assert found == []
    else:
        assert [f.message.split("; ")[1] for f in found] == [f"up to {bound} of its tasks can run at once"]


# Issue 21, pattern F1b shape 1: a helper function of the file making tasks (no `dag=`, the active
# DAG adopts them) leaves unknown only the DAGs whose body calls it. name -> (code, the DAGs DG103
# flags)
HELPERS = {
    "a_helper_one_dag_never_calls": ("""
def submit_and_wait(name):
    submit = BashOperator(task_id=f"submit_{name}", bash_command="submit.sh",
                          on_failure_callback=lambda context: print(context))
    poll = BashOperator(task_id=f"poll_{name}", bash_command="poll.sh")
    submit >> poll
    return submit, poll


with DAG("uses_helper", schedule="*/2 * * * *", start_date=START, max_active_runs=1):
    submit_and_wait("news")

with DAG("one_task", schedule="0 */2 * * *", start_date=START, max_active_runs=1):
    BashOperator(task_id="submit_sitemap", bash_command="sitemap.sh")
""", {"uses_helper"}),
    "a_fan_out_through_a_helper_still_fires": ("""
def fan_out():
    for i in range(6):
        BashOperator(task_id=f"load_{i}", bash_command="echo")


with DAG("wide", schedule="@daily", start_date=START, max_active_runs=1):
    BashOperator(task_id="start", bash_command="echo")
    fan_out()

with DAG("narrow", schedule="@daily", start_date=START, max_active_runs=1):
    BashOperator(task_id="only", bash_command="echo")
""", {"wide"}),
    "a_helper_adding_a_task_to_another_dag": ("""
other = DAG("other", schedule="@daily", start_date=START, max_active_runs=1)
BashOperator(task_id="first", bash_command="echo", dag=other)


def add_extra():
    BashOperator(task_id="extra", bash_command="echo", dag=other)


with DAG("caller", schedule="@daily", start_date=START, max_active_runs=1):
    BashOperator(task_id="only", bash_command="echo")
    add_extra()
""", {"caller", "other"}),
    "a_helper_linking_tasks_of_another_dag": (f"""
with DAG("other", schedule="@daily", start_date=START, max_active_runs=1):
    a, b, c, d, e = {loads(5, "t")}


def link():
    a >> b >> c >> d >> e  # set only if called: the five may run at once


with DAG("caller", schedule="@daily", start_date=START, max_active_runs=1):
    BashOperator(task_id="only", bash_command="echo")
    link()
""", {"caller", "other"}),
    "a_helper_calling_what_it_cannot_see_into": ("""
from plugins.tasks import add_quality_checks


def add():
    def later():
        return 1

    later()
    add_quality_checks()


with DAG("caller", schedule="@daily", start_date=START, max_active_runs=1):
    BashOperator(task_id="only", bash_command="echo")
    add()

with DAG("bystander", schedule="@daily", start_date=START, max_active_runs=1):
    BashOperator(task_id="only", bash_command="echo")
""", {"caller", "bystander"}),
}


@pytest.mark.parametrize("case", sorted(HELPERS))
def test_dg103_a_helper_leaves_unknown_only_the_dags_calling_it(tmp_path, case):
    code, flagged = HELPERS[case]
    found = [f for f in lint(tmp_path, HEADER + code) if f.code == "DG103"]
    assert {f.message.split("'")[1] for f in found} == flagged


def test_dg103_an_edge_in_a_lambda_between_tasks_made_once_is_not_read_as_set(tmp_path):
    code = f"""
with DAG("d", schedule="@daily", start_date=START, max_active_runs=1):
    a, b, c, d, e = {loads(5, "t")}
    link = lambda: a >> b >> c >> d >> e  # set only if called: the five may run at once
"""
    assert "DG103" in codes(lint(tmp_path, HEADER + code))


# Issue 21, DG103's last false positives on the fresh corpus. Ferlab: @task functions imported
# from a project module are tasks of the DAG that calls them. name -> (the project's files, the
# bound DG103 states for the DAG file, or None when it is silent)
TASKS_MODULE = """\
from airflow.sdk import task
from airflow.utils.trigger_rule import TriggerRule


@task(task_id="get_pending_ids")
def get_pending_ids():
    return [1]


@task
def get_batch_ids():
    return [2]


@task(trigger_rule=TriggerRule.ALL_DONE)
def decide(ids, batches):
    return bool(ids or batches)


@task
def load(part):
    print(part)


def not_a_task():
    return 3
"""
IMPORTED = {
    "two_lookups_then_a_decision": ("""
from lib.tasks import decide, get_batch_ids, get_pending_ids

with DAG("d", schedule="0 1 * * *", start_date=START, max_active_runs=1):
    ids = get_pending_ids()
    batches = get_batch_ids()
    [ids, batches] >> decide(ids, batches) >> BashOperator(task_id="trigger", bash_command="echo")
""", None),
    "a_fan_out_of_six_imported_tasks": ("""
from lib import tasks

with DAG("d", schedule="@daily", start_date=START, max_active_runs=1):
    start = BashOperator(task_id="start", bash_command="echo")
    start >> [tasks.load.override(task_id=f"load_{i}")(i) for i in range(6)]
""", 16),
    "a_trigger_rule_read_where_the_task_is_defined": (f"""
from lib.tasks import decide, load

with DAG("d", schedule="@daily", start_date=START, max_active_runs=1):
    start = BashOperator(task_id="start", bash_command="echo")
    # Four at once; read as starting early, `decide` would be a fifth beside them.
    parts = [load.override(task_id="a")(1), load.override(task_id="b")(2), load.override(task_id="c")(3),
             load.override(task_id="e")(4)]
    start >> parts >> decide(1, 2) >> {chained(3, "after")}
""", None),
    "through_the_module_name": ("""
from lib import tasks

with DAG("d", schedule="0 1 * * *", start_date=START, max_active_runs=1):
    ids = tasks.get_pending_ids()
    batches = tasks.get_batch_ids()
    [ids, batches] >> tasks.decide(ids, batches) >> BashOperator(task_id="trigger", bash_command="echo")
""", None),
    "six_imported_calls_written_out": ("""
from lib.tasks import load

with DAG("d", schedule="@daily", start_date=START, max_active_runs=1):
    start = BashOperator(task_id="start", bash_command="echo")
    start >> [load.override(task_id="a")(1), load.override(task_id="b")(2), load.override(task_id="c")(3),
              load.override(task_id="e")(4), load.override(task_id="f")(5), load.override(task_id="g")(6)]
""", 6),
    "an_imported_plain_function_may_make_tasks": ("""
from lib.tasks import get_pending_ids, not_a_task

with DAG("d", schedule="@daily", start_date=START, max_active_runs=1):
    get_pending_ids() >> BashOperator(task_id="trigger", bash_command="echo")
    not_a_task()
""", 16),
}


@pytest.mark.parametrize("case", sorted(IMPORTED))
def test_dg103_counts_the_tasks_imported_task_functions_make(tmp_path, case):
    code, bound = IMPORTED[case]
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "__init__.py").write_text("")
    (tmp_path / "lib" / "tasks.py").write_text(TASKS_MODULE)
    found = [f for f in lint(tmp_path, HEADER + code) if f.code == "DG103"]
    if bound is None:
        assert found == []
    else:
        assert [f.message.split("; ")[1] for f in found] == [f"up to {bound} of its tasks can run at once"]


def test_an_imported_task_functions_body_is_read_in_the_dag_file_only_for_its_clock(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "__init__.py").write_text("")
    (tmp_path / "lib" / "stamps.py").write_text(
        "import datetime\nfrom airflow.sdk import task\n\n\n@task\ndef stamp():\n"
        "    day = datetime.datetime.now().strftime('%Y-%m-%d')\n"
        "    return f's3://exports/events/{day}.parquet'\n")
    dag_file = HEADER + """
from lib.stamps import stamp

with DAG("d", schedule="@daily", start_date=START, max_active_runs=1):
    stamp() >> BashOperator(task_id="after", bash_command="echo")
"""
    # Its body is no other DG2xx rule's in the DAG file; its clock read is DG202's, at the call
    # (its own module has no DAG to judge it by), naming where the body reads the clock.
    found = [f for f in lint(tmp_path, dag_file) if f.code.startswith("DG2")]
    call_line = dag_file.splitlines().index('    stamp() >> BashOperator(task_id="after", bash_command="echo")') + 1
    assert [(f.code, f.line, f.column) for f in found] == [("DG202", call_line, 5)]
    assert "lib/stamps.py:7) in its body" in found[0].message.replace("\\", "/")
    # The same function written in the DAG file is read there.
    local = dag_file.replace("from lib.stamps import stamp\n", (tmp_path / "lib" / "stamps.py").read_text())
    assert "DG202" in codes(lint(tmp_path, local))


# superdao: a loop over a constant that makes each task on exactly one pass, chosen by an `if` on
# the loop's value, makes each task once. name -> (code, the bound, None when silent)
LOOPS = {
    "one_task_per_branch_chosen_by_the_loop_value": ("""
CHAINS = {"eth_data": "eth", "polygon_data": "polygon"}


@dag(schedule="@monthly", start_date=START, max_active_runs=1)
def resolve():
    start = BashOperator(task_id="start", bash_command="echo")
    finish = BashOperator(task_id="finish", bash_command="echo")
    eth_task = None
    polygon_task = None
    for db, chain_name in CHAINS.items():
        @task(task_id=f"{chain_name}_upload")
        def upload(**kwargs):
            print(db)

        if chain_name == "eth":
            eth_task = upload()
        elif chain_name == "polygon":
            polygon_task = upload()

    start >> eth_task >> polygon_task >> finish


resolve()
""", None),
    "a_task_made_on_every_pass_is_many": (f"""
with DAG("d", schedule="@daily", start_date=START, max_active_runs=1):
    for name in ["a", "b", "c", "d", "e", "f"]:
        BashOperator(task_id=name, bash_command="echo")
""", 16),
    "a_pass_cut_short_is_not_unrolled": ("""
with DAG("d", schedule="@daily", start_date=START, max_active_runs=1):
    for name in ["a", "b", "c", "d", "e", "f"]:
        if name == "c":
            break
        if name == "a":
            BashOperator(task_id=name, bash_command="echo")
    BashOperator(task_id="x", bash_command="echo") >> BashOperator(task_id="y", bash_command="echo")
""", 16),
    "a_test_the_loop_value_does_not_decide": ("""
import os

with DAG("d", schedule="@daily", start_date=START, max_active_runs=1):
    for name in ["a", "b"]:
        if os.environ.get(name):
            BashOperator(task_id=name, bash_command="echo")
""", 16),
    "an_edge_set_inside_an_unrolled_loop": ("""
with DAG("d", schedule="@daily", start_date=START, max_active_runs=1):
    a, b, c, d, e = [BashOperator(task_id=n, bash_command="echo") for n in "abcde"]
    for name in ["x"]:
        a >> b >> c >> d >> e
""", 16),
}


@pytest.mark.parametrize("case", sorted(LOOPS))
def test_dg103_unrolls_a_loop_over_constants(tmp_path, case):
    code, bound = LOOPS[case]
    found = [f for f in lint(tmp_path, HEADER + code) if f.code == "DG103"]
    if bound is None:
        assert found == []
    else:
        assert [f.message.split("; ")[1] for f in found] == [f"up to {bound} of its tasks can run at once"]
