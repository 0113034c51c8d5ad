"""concurrent_task_bound: the widest set of a DAG's tasks none of which runs before another,
checked against brute force on random dependency graphs."""

from __future__ import annotations

import itertools

import libcst as cst
from hypothesis import given, settings
from hypothesis import strategies as st

from dagguard.model.dags.builder import build_file_model
from dagguard.model.dags.serial_tasks import concurrent_task_bound

HEADER = """\
from airflow.sdk import DAG
from airflow.providers.standard.operators.empty import EmptyOperator

with DAG("d", schedule="@daily", max_active_runs=1):
"""


def bound(count: int, edges: set[tuple[int, int]]) -> int | None:
    lines = [f'    t{i} = EmptyOperator(task_id="t{i}")' for i in range(count)]
    lines += [f"    t{a} >> t{b}" for a, b in sorted(edges)]
    file = build_file_model(cst.parse_module(HEADER + "\n".join(lines) + "\n"))
    return concurrent_task_bound(file, file.dags[0])


def brute_force_width(count: int, edges: set[tuple[int, int]]) -> int:
    before = {(a, b) for a, b in edges}
    changed = True
    while changed:  # transitive closure
        extra = {(a, d) for a, b in before for c, d in before if b == c} - before
        changed = bool(extra)
        before |= extra
    for size in range(count, 0, -1):
        for group in itertools.combinations(range(count), size):
            if not any((a, b) in before for a in group for b in group):
                return size
    return 0


# Edges only from a lower to a higher number: always a DAG.
graphs = st.integers(min_value=1, max_value=7).flatmap(lambda n: st.tuples(
    st.just(n), st.sets(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)).filter(lambda e: e[0] < e[1]))))


@settings(max_examples=60, deadline=None)
@given(graphs)
def test_the_bound_is_the_widest_antichain(graph):
    count, edges = graph
    assert bound(count, edges) == brute_force_width(count, edges)


def test_a_cycle_proves_nothing():
    assert bound(3, {(0, 1), (1, 2), (2, 0)}) is None


def test_known_shapes():
    assert bound(1, set()) == 1
    assert bound(4, {(0, 1), (1, 2), (2, 3)}) == 1                   # one chain
    assert bound(4, {(0, 1), (0, 2), (1, 3), (2, 3)}) == 2           # a diamond
    assert bound(5, {(0, 1), (0, 2), (0, 3), (0, 4)}) == 4           # a fan-out
    assert bound(6, {(0, 3), (1, 4), (2, 5)}) == 3                   # three chains side by side
