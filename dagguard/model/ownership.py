"""Which DAG a node of the file belongs to: the regions of code each DAG owns, so that a finding
about a task or a line inside a DAG can name it without every rule saying so."""

from __future__ import annotations

from typing import Optional

from dagguard.model.dags import DagModel, FileModel


def dag_regions(file: FileModel) -> dict[int, Optional[DagModel]]:
    """Nodes (by id) whose subtree belongs to one DAG: its call, its `with` bodies or @dag
    function, and each of its tasks' call and callable. None marks a node two DAGs share (a
    callable used by both): a finding there belongs to neither alone."""
    regions: dict[int, Optional[DagModel]] = {}

    def claim(node: object, dag: DagModel) -> None:
        if node is None:
            return
        key = id(node)
        regions[key] = dag if regions.get(key, dag) is dag else None

    for dag in file.dags:
        claim(dag.call, dag)
        claim(dag.report_node, dag)
        for body in dag.bodies:
            claim(body, dag)
        for task in dag.tasks:
            claim(task.node, dag)
            claim(task.callable, dag)
    return regions
