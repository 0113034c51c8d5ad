"""DG302: two DAGs with the same dag_id; Airflow keeps one and the other silently disappears."""

from __future__ import annotations

from typing import Iterable, Optional

# Only tree-free modules: on a cached run this rule compares cached sites without libcst.
from dagguard.model.dags.branch_path import exclusive
from dagguard.rules.rule import DagSite, ProjectRule


class DuplicateDagId(ProjectRule):
    code = "DG302"
    name = "duplicate-dag-id"
    severity = "error"
    summary = "Two DAGs share a dag_id, in one file or across the checked files"

    def check_project(self, sites: list[DagSite]) -> Iterable[tuple[DagSite, str, Optional[str]]]:
        defined: dict[str, list[DagSite]] = {}
        for site in sorted(sites, key=lambda s: (str(s.path), s.line, s.column)):
            alternatives = defined.setdefault(site.dag_id, [])
            # Definitions in branches of one if/else that exclude each other are alternatives:
            # only one of them runs.
            earlier = next((e for e in alternatives
                            if e.path != site.path or not exclusive(e.branches, site.branches)), None)
            alternatives.append(site)
            if earlier is not None:
                yield (
                    site,
                    f"DAG '{site.dag_id}' is already defined at {earlier.path}:{earlier.line}; "
                    "Airflow keeps only one of them",
                    "give each DAG a unique dag_id",
                )
