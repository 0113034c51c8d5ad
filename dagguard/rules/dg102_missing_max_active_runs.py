"""DG102: no max_active_runs, so up to 16 runs of the DAG run at once."""

from __future__ import annotations

from typing import Iterable

from dagguard.model.dags import FileModel
from dagguard.rules.base import Report, Rule, RuleContext


class MissingMaxActiveRuns(Rule):
    code = "DG102"
    name = "missing-max-active-runs"
    severity = "warning"
    summary = "The DAG sets no max_active_runs: up to 16 of its runs may run at once"

    def check(self, file: FileModel, context: RuleContext) -> Iterable[Report]:
        for dag in file.dags:
            if dag.surely_lacks("max_active_runs"):
                yield Report(
                    node=dag.report_node,
                    message=f"{dag.label} sets no max_active_runs; up to 16 of its runs can run at once",
                    help="set max_active_runs=1 if runs must not overlap, or a small bound",
                    dag=dag,
                )
