"""The DAG's task dependency graph: >>, <<, chain, set_upstream and XComs handed to tasks."""

from __future__ import annotations

import textwrap

import libcst as cst

from dagguard.model.dags.builder import build_file_model
from dagguard.model.dags.dependencies import task_graph, xcom_producer

HEADER = """
from airflow.sdk import DAG, XComArg, chain, chain_linear, cross_downstream, task
from airflow.providers.standard.operators.empty import EmptyOperator
"""


def upstream(body: str) -> dict[str, list[str]]:
    """task_id -> the task_ids of every task that runs before it (sorted)."""
    file = build_file_model(cst.parse_module(HEADER + textwrap.dedent(body)))
    found: dict[str, list[str]] = {}
    for dag in file.dags:
        graph = task_graph(file, dag)
        assert task_graph(file, dag) is graph  # built once
        for t in dag.tasks:
            found[f"{dag.dag_id}.{t.task_id}"] = sorted(str(a.task_id) for a in graph.ancestors(t))
    return found


def ops(*names: str) -> str:
    return "".join(f"    {n} = EmptyOperator(task_id={n!r})\n" for n in names)


def test_shift_operators_lists_and_chained_shifts():
    found = upstream('with DAG("d", schedule=None):\n' + ops("a", "b", "c", "d", "e") + """
    a >> [b, c] >> d
    e << d
""")
    assert found["d.a"] == []
    assert found["d.b"] == found["d.c"] == ["a"]
    assert found["d.d"] == ["a", "b", "c"]
    assert found["d.e"] == ["a", "b", "c", "d"]


def test_list_on_the_left_and_mixed_directions():
    found = upstream('with DAG("d", schedule=None):\n' + ops("a", "b", "c", "x") + """
    [a, b] >> c << x
""")
    assert found["d.c"] == ["a", "b", "x"]
    assert found["d.x"] == []


def test_set_upstream_and_set_downstream():
    found = upstream('with DAG("d", schedule=None):\n' + ops("a", "b", "c") + """
    b.set_upstream(a)
    b.set_downstream([c])
""")
    assert found["d.b"] == ["a"]
    assert found["d.c"] == ["a", "b"]


def test_chain_pairs_equal_lists_and_cross_downstream_links_all():
    found = upstream('with DAG("d", schedule=None):\n' + ops("a", "b1", "b2", "c1", "c2", "x", "y", "z") + """
    chain(a, [b1, b2], [c1, c2])
    cross_downstream([x, y], [z])
""")
    assert found["d.c1"] == ["a", "b1"]
    assert found["d.c2"] == ["a", "b2"]
    assert found["d.z"] == ["x", "y"]


def test_chain_spreads_a_starred_list_as_airflow_does():
    found = upstream('with DAG("d", schedule=None):\n' + ops("a", "b", "c", "d", "e", "x", "y") + """
    steps = [b, c]
    chain(a, *steps, d)
    chain(*(d, e))
    chain_linear(*[x, [y]])
""")
    assert found["d.b"] == ["a"] and found["d.c"] == ["a", "b"]
    assert found["d.d"] == ["a", "b", "c"] and found["d.e"] == ["a", "b", "c", "d"]
    assert found["d.y"] == ["x"]


def test_chain_with_a_spread_of_unknown_length_links_nothing():
    # Which task follows which depends on the comprehension's length: no edge is guessed.
    found = upstream('with DAG("d", schedule=None):\n' + ops("a", "b", "c") + """
    chain(a, *[EmptyOperator(task_id=f"t{i}") for i in range(3)], b)
    chain(*c.downstream_list)
    chain(a, *unknown, c)
""")
    assert found["d.b"] == [] and found["d.c"] == []


def test_chain_linear_links_every_pair_of_neighbours():
    found = upstream('with DAG("d", schedule=None):\n' + ops("a", "b1", "b2", "c") + """
    chain_linear(a, [b1, b2], c)
""")
    assert found["d.c"] == ["a", "b1", "b2"]


def test_taskflow_calls_output_and_xcomarg_are_upstream():
    found = upstream("""
with DAG("d", schedule=None):
    first = EmptyOperator(task_id="first")
    other = EmptyOperator(task_id="other")

    @task
    def extract():
        return 1

    @task
    def load(*values, extra=None):
        return values

    data = extract()
    load(data["key"], first.output, extra={"x": XComArg(other)})
""")
    assert found["d.load"] == ["extract", "first", "other"]


def test_edges_stay_within_one_dag_and_unknown_operands_add_none():
    found = upstream("""
with DAG("one", schedule=None) as one:
    a = EmptyOperator(task_id="a")
with DAG("two", schedule=None) as two:
    b = EmptyOperator(task_id="b")
    c = EmptyOperator(task_id="c")
    for name in ["x", "y"]:
        step = EmptyOperator(task_id=f"load_{name}")
        b >> step
    for each in [b]:
        each >> c
    a >> b
""")
    assert found["two.b"] == []
    assert found["two.None"] == ["b"]  # the loop's task: one node for every pass
    assert found["two.c"] == []         # a loop variable is not resolved


def test_dependencies_inside_a_dag_function():
    found = upstream("""
from airflow.sdk import dag

@dag(schedule=None)
def pipeline():
    a = EmptyOperator(task_id="a")
    b = EmptyOperator(task_id="b")
    a >> b

pipeline()
""")
    assert found["pipeline.b"] == ["a"]


def test_xcom_producer_of_an_argument():
    code = HEADER + textwrap.dedent("""
    with DAG("d", schedule=None):
        @task
        def make():
            return 1

        @task
        def use(value):
            return value

        use(make())
        use(42)
    """)
    file = build_file_model(cst.parse_module(code))
    dag = file.dags[0]
    by_id = {}
    for t in dag.tasks:
        by_id.setdefault(t.task_id, []).append(t)
    with_xcom, with_literal = by_id["use"]
    producer = xcom_producer(file, with_xcom.node.args[0].value, with_xcom.scope)
    assert producer is by_id["make"][0]
    assert xcom_producer(file, with_literal.node.args[0].value, with_literal.scope) is None
